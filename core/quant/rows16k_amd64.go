//go:build !noasm

package quant

// c16PrefetchQ4K is how far ahead (bytes) rows16C16Q4KAVX512 prefetches
// its group's stream to L2 (PREFETCHT2 on every line of a column): half a
// column. On the Intel Xeon VM of session 13 (BenchmarkMemDecodeCol16,
// two threads; bench/results/2026-12-03-s13-cpu-q4kc16) it read 25.8
// GB/s at 1152 bytes ahead on a quiet machine (25.5–25.7 from 768 to
// 1536, 25.1 at 2304, 23.7 with no lead, 22.9 at 4608), where the x8
// kernel read 23.9; PREFETCHT0 lost ~1.5 GB/s to T2 (another process
// busy beside it). Not measured on AMD parts. A prefetch changes no result.
var c16PrefetchQ4K = c16ColQ4K / 2

//go:noescape
func rows16C16Q4KAVX512(w *byte, x *byte, nb int, out *[16]float32)

//go:noescape
func rows16C16Q4KAVX512NoPF(w *byte, x *byte, nb int, out *[16]float32)

//go:noescape
func prep4x16Q4KAVX512(group *byte, q int, nb int, u *byte)

// rows16C16Q4K wraps rows16C16Q4KAVX512 (tab unused: the Q4_K kernel
// takes the token's sub-block sums from its Q8_K row).
func rows16C16Q4K(w, x, _ []byte, out *[16]float32) {
	nb := len(w) / c16ColQ4K
	if nb <= 0 {
		*out = [16]float32{}
		return
	}
	_ = x[nb*bytesQ8K-1]
	if !c16Q4KPrefetch {
		rows16C16Q4KAVX512NoPF(&w[0], &x[0], nb, out)
		return
	}
	rows16C16Q4KAVX512(&w[0], &x[0], nb, out)
}

// c16Q4KPrefetch: whether rows16C16Q4K runs the prefetching body; on AMD
// it does not. On the Zen 5 VM of session 21 the body without its 36
// PREFETCHT2 a column decoded the 1B Q4_K_M file faster in-process, most
// in the VM's fast memory state, where the two vCPUs compute together only
// as fast as one (bench/results/2026-12-07-s21-cpu). Intel keeps it (its
// distances were measured there, c16PrefetchQ4K).
var c16Q4KPrefetch = cpuIsIntel()

// prep16Q4K wraps prep4x16Q4KAVX512 for row quad q (0..3) of a c16 group.
func prep16Q4K(g []byte, q int, u []byte) {
	nb := len(u) / prep4Q4_KBlock
	if nb == 0 {
		return
	}
	_ = u[nb*prep4Q4_KBlock-1]
	_ = g[nb*c16ColQ4K-1]
	prep4x16Q4KAVX512(&g[0], q&3, nb, &u[0])
}

// c16PrefetchQ6K is how far ahead (bytes) rows16C16Q6KAVX512 prefetches
// its group's stream to L2: its 53 PREFETCHT2 a column (the column's
// lines at this lead, in address order) spread three or four before each
// of the body's sixteen steps. Until session 20 the kernel issued them in
// one burst at the top of each column, 2304 bytes ahead: on the Intel
// Xeon VM of session 13 (BenchmarkMemDecodeCol16, quiet machine) that
// read 26.4 GB/s (25.5–25.8 from 768 to 1536, 25.3 at 4608, 25.1 with no
// lead; the x8 kernel 25.4). On the AMD EPYC Zen 5 VM of session 20
// (BenchmarkZQ6Mem2, two threads, medians of 30 alternating passes over
// ~400 MB; bench/results/2026-12-07-s20-q6c16) the burst read 24.0–26.8
// GB/s where x8 read 31.0–35.8, and the spread prefetches six columns
// (20160 bytes) ahead 32.5, 39.4, 40.8, 41.2 (meter 35.9, 55.0, 58.6,
// 56.9; x8 32.1, 35.5, 35.8, 34.0); four columns ahead within 1.3 of
// that, a near variant 2304 bytes ahead 27.4 (meter 34.9). Intel keeps
// 2304: the spread pattern is not measured there. A prefetch changes no
// result. (Until session 20 AMD repacked Q6_K weights to x8, whose kernel
// the burst-prefetching c16 one read slower than; with the spread
// prefetches c16 reads as fast as x8 in the VM's slow memory state and
// 11–14 % faster in the fast one, and decoded the 1B Q4_K_M file 0.2–1.4 %
// faster in one process, so every type with a c16 kernel takes it.)
var c16PrefetchQ6K = c16PrefetchQ6KFor(cpuIsIntel())

func c16PrefetchQ6KFor(intel bool) int {
	if intel {
		return 2304
	}
	return 6 * c16ColQ6K
}

//go:noescape
func rows16C16Q6KAVX512(w *byte, x *byte, nb int, out *[16]float32)

//go:noescape
func gather4C16Q6KAVX512(group *byte, q int, nb int, dst *byte, rowStride, colStride int)

//go:noescape
func gather4C16Q4KAVX512(group *byte, q int, nb int, dst *byte, rowStride, colStride int)

// deinterleave16K turns a c16 group of a K type (super-blocks of bs
// bytes, columns of 16·bs) back into its sixteen rows of wrb bytes: the
// quad gather (gather4C16Q4KAVX512, gather4C16Q6KAVX512) for each row
// quad, rows wrb apart.
func deinterleave16K(gather func(group *byte, q int, nb int, dst *byte, rowStride, colStride int), bs int) func(dst []byte, wrb int, src []byte) {
	return func(dst []byte, wrb int, src []byte) {
		nb := wrb / bs
		if nb == 0 {
			return
		}
		_ = dst[16*wrb-1]
		_ = src[16*wrb-1]
		for q := 0; q < 4; q++ {
			gather(&src[0], q, nb, &dst[4*q*wrb], wrb, bs)
		}
	}
}

// rows16C16Q6K wraps rows16C16Q6KAVX512 (tab unused).
func rows16C16Q6K(w, x, _ []byte, out *[16]float32) {
	nb := len(w) / c16ColQ6K
	if nb <= 0 {
		*out = [16]float32{}
		return
	}
	_ = x[nb*bytesQ8K-1]
	rows16C16Q6KAVX512(&w[0], &x[0], nb, out)
}

// prep16Q6K prepares row quad q (0..3) of a Q6_K c16 group for the tile
// kernels: the quad's columns gathered to the file layout (four rows'
// super-blocks a column, gather4C16Q6KAVX512) eight at a time on the
// stack, then prep4Q6_KAVX2asm on them.
func prep16Q6K(g []byte, q int, u []byte) {
	nb := len(u) / prep4Q6_KBlock
	if nb == 0 {
		return
	}
	_ = u[nb*prep4Q6_KBlock-1]
	_ = g[nb*c16ColQ6K-1]
	const span = 8
	var buf [span * 4 * bytesQ6K]byte
	for j := 0; j < nb; j += span {
		n := min(span, nb-j)
		gather4C16Q6KAVX512(&g[j*c16ColQ6K], q&3, n, &buf[0], bytesQ6K, 4*bytesQ6K)
		prep4Q6_KAVX2asm(&buf[0], bytesQ6K, 4*bytesQ6K, n, &u[j*prep4Q6_KBlock])
	}
}
