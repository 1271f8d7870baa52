//go:build !noasm

package quant

// c16PrefetchQ4_0 is how far ahead (bytes) the col16 decode kernel
// (q4_0q8_0r16c16AVX512) prefetches its group's stream: eight blocks on
// Intel, where the session 12 prototype read from memory fastest
// (BenchmarkZZCol16Mem, bench/results/2026-12-02-s12-cpu-col16: 30.0 GB/s
// eight blocks ahead, 29.7 with none, 20.9 sixteen ahead); sixteen
// blocks elsewhere (AMD parts with AVX-512, where the x8 kernel preferred
// 4.5 KiB; not measured for col16). A prefetch changes no result.
//
// c16PrefetchQ8_0 is the same for the Q8_0 col16 kernel
// (q8_0q8_0r16c16AVX512): the x8 Q8_0 kernel's distances in bytes
// (x8Prefetch, 2176 on Intel, 4352 elsewhere), four and eight col16
// blocks.
var c16PrefetchQ4_0, c16PrefetchQ8_0 = c16Prefetch(cpuIsIntel())

func c16Prefetch(intel bool) (q4_0, q8_0 int) {
	if intel {
		return 8 * bytesQ4c16, 4 * bytesQ80c16 // 2304, 2176
	}
	return 16 * bytesQ4c16, 8 * bytesQ80c16 // 4608, 4352
}

//go:noescape
func q4_0q8_0r16c16AVX512(w *byte, x *byte, nb int, tab *byte, out *[16]float32)

//go:noescape
func prep4x16Q4_0SAVX512(q, s, u *byte, nb int)

//go:noescape
func q8_0q8_0r16c16AVX512(w *byte, x *byte, nb int, tab *byte, out *[16]float32)

//go:noescape
func prep4x16Q8_0AVX512(q, s, u *byte, nb int)

// rows16C16 wraps a col16 decode kernel of group blocks of group bytes
// (bytesQ4c16, bytesQ80c16).
func rows16C16(asm func(w *byte, x *byte, nb int, tab *byte, out *[16]float32), group int) func(w, x, tab []byte, out *[16]float32) {
	return func(w, x, tab []byte, out *[16]float32) {
		nb := len(w) / group
		if nb <= 0 {
			*out = [16]float32{}
			return
		}
		_ = x[nb*bytesQ80-1]
		_ = tab[nb*token1Q8_0-1]
		asm(&w[0], &x[0], nb, &tab[0], out)
	}
}

// prep16 wraps the preparation of row quad q (0..3) of a col16 group of
// group bytes a block into prepBlock bytes a block.
func prep16(asm func(q, s, u *byte, nb int), group, prepBlock int) func(group []byte, q int, u []byte) {
	return func(g []byte, q int, u []byte) {
		nb := len(u) / prepBlock
		if nb == 0 {
			return
		}
		_ = u[nb*prepBlock-1]
		_ = g[nb*group-1]
		q &= 3
		asm(&g[32+16*q], &g[8*q], &u[0], nb)
	}
}

//go:noescape
func deinterleave16Q4_0AVX512(dst *byte, wrb int, src *byte, nb int)

//go:noescape
func deinterleave16Q8_0AVX512(dst *byte, wrb int, src *byte, nb int)

// deinterleave16 wraps a col16 deinterleave kernel of a type with blocks
// of block bytes.
func deinterleave16(asm func(dst *byte, wrb int, src *byte, nb int), block int) func(dst []byte, wrb int, src []byte) {
	return func(dst []byte, wrb int, src []byte) {
		nb := wrb / block
		if nb == 0 {
			return
		}
		_ = dst[16*wrb-1]
		_ = src[nb*16*block-1]
		asm(&dst[0], wrb, &src[0], nb)
	}
}
