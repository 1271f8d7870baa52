//go:build !noasm

package quant

// c16PrefetchQ4_0 is how far ahead (bytes) the col16 decode kernel
// (q4_0q8_0r16c16AVX512) prefetches its group's stream: eight blocks on
// Intel, where it read from memory fastest (BenchmarkMemDecodeCol16,
// bench/results/2026-12-03-s13-cpu-col16: 31.2 GB/s eight blocks ahead,
// 31.0 four, 29.7 none, 28.5 twelve, 20.2 sixteen; decode of a 1B Q4_0
// model, alternating: four and twelve blocks and none slower than eight);
// sixteen blocks elsewhere (AMD parts with AVX-512). On the Zen 5 VM of
// session 15 (BenchmarkMemDecodeCol16, four runs) it read 40.5–49.6 GB/s
// with no lead against 36.6–45.4 sixteen blocks ahead and 34.5–46.0 at
// four to twelve, but decode of a 1B Q4_0 model with no lead (and none for
// x8 Q4_0) lost a median 4 % over 9 alternating rounds, so sixteen stays
// (bench/results/2026-12-06-s15-cpu2). A prefetch changes no result.
// Since session 21 the GFNI kernels that AMD runs do not prefetch at all
// (c16Q4_0Prefetch); the distance is then used only by the AVX-512 body
// without GFNI.
var c16PrefetchQ4_0 = c16Prefetch(cpuIsIntel())

func c16Prefetch(intel bool) int {
	if intel {
		return 8 * bytesQ4c16 // 2304
	}
	return 16 * bytesQ4c16 // 4608
}

//go:noescape
func q4_0q8_0r16c16AVX512(w *byte, x *byte, nb int, tab *byte, out *[16]float32)

//go:noescape
func q4_0q8_0r16c16GFNI(w *byte, x *byte, nb int, tab *byte, out *[16]float32)

//go:noescape
func q4_0q8_0r16c16GFNINoPF(w *byte, x *byte, nb int, tab *byte, out *[16]float32)

// c16Q4_0Kernel is the Q4_0 col16 decode kernel of the AVX512 level: with
// GFNI, q4_0q8_0r16c16GFNI, which takes each chunk's high nibbles in one
// instruction instead of two (the same result, bit for bit). On the Zen 5
// VM of session 16 it streamed 1.7–2.6 % faster from memory (three
// alternating runs of 30 rounds) and decoded a 1B Q4_0 model a median
// 0.6–1.2 % faster in two in-process A/B runs (bench/results/2026-12-06-s16-cpu).
func c16Q4_0Kernel(gfni bool) func(w *byte, x *byte, nb int, tab *byte, out *[16]float32) {
	if gfni && !c16Q4_0Prefetch {
		return q4_0q8_0r16c16GFNINoPF
	}
	if gfni {
		return q4_0q8_0r16c16GFNI
	}
	return q4_0q8_0r16c16AVX512
}

// c16Q4_0x4Kernel is the four-group Q4_0 col16 decode kernel (GFNI), with
// or without the software prefetch as c16Q4_0Prefetch says.
func c16Q4_0x4Kernel() func(w *byte, stride int, x *byte, nb int, tab *byte, out *[64]float32) {
	if !c16Q4_0Prefetch {
		return q4_0q8_0r16c16x4GFNINoPF
	}
	return q4_0q8_0r16c16x4GFNI
}

// c16Q4_0Prefetch: whether the GFNI Q4_0 col16 decode kernels (one group
// and four) prefetch their streams c16PrefetchQ4_0 bytes ahead; on AMD
// they do not. On the Zen 5 VM of session 21 the kernels without their
// five PREFETCHT0 a block (the hardware prefetchers alone) decoded a 1B
// Q4_0 model 4–5 % faster, in-process A/B in alternating blocks with an
// A/A control (bench/results/2026-12-07-s21-cpu): the prefetches are a
// quarter of the loop's load-port work, and in this VM's fast memory state
// the two vCPUs compute together only as fast as one, where the kernel is
// short of issue slots, not of memory. Intel keeps them: there eight blocks
// ahead beat none (see c16PrefetchQ4_0), and nothing was measured there
// since. (Session 15's "no lead" on this VM was a prefetch 0 bytes ahead,
// still issued, not none.)
var c16Q4_0Prefetch = cpuIsIntel()

//go:noescape
func prep4x16Q4_0SAVX512(q, s, u *byte, nb int)

//go:noescape
func deinterleave16Q4_0AVX512(dst *byte, wrb int, src *byte, nb int)

// rows16C16 wraps the col16 decode kernel.
func rows16C16(asm func(w *byte, x *byte, nb int, tab *byte, out *[16]float32)) func(w, x, tab []byte, out *[16]float32) {
	return func(w, x, tab []byte, out *[16]float32) {
		nb := len(w) / bytesQ4c16
		if nb <= 0 {
			*out = [16]float32{}
			return
		}
		_ = x[nb*bytesQ80-1]
		_ = tab[nb*token1Q8_0-1]
		asm(&w[0], &x[0], nb, &tab[0], out)
	}
}

// prep16 wraps the preparation of row quad q (0..3) of a col16 group.
func prep16(asm func(q, s, u *byte, nb int)) func(group []byte, q int, u []byte) {
	return func(g []byte, q int, u []byte) {
		nb := len(u) / prep4Q4_0S
		if nb == 0 {
			return
		}
		_ = u[nb*prep4Q4_0S-1]
		_ = g[nb*bytesQ4c16-1]
		q &= 3
		asm(&g[32+16*q], &g[8*q], &u[0], nb)
	}
}

// deinterleave16 wraps the col16 deinterleave kernel.
func deinterleave16(asm func(dst *byte, wrb int, src *byte, nb int)) func(dst []byte, wrb int, src []byte) {
	return func(dst []byte, wrb int, src []byte) {
		nb := wrb / bytesQ4
		if nb == 0 {
			return
		}
		_ = dst[16*wrb-1]
		_ = src[nb*bytesQ4c16-1]
		asm(&dst[0], wrb, &src[0], nb)
	}
}

//go:noescape
func q4_0q8_0r16c16x4GFNI(w *byte, stride int, x *byte, nb int, tab *byte, out *[64]float32)

//go:noescape
func q4_0q8_0r16c16x4GFNINoPF(w *byte, stride int, x *byte, nb int, tab *byte, out *[64]float32)
