//go:build !noasm

package quant

//go:noescape
func q4_0q8_0r8tAVX2(w *byte, wstride int, x *byte, nb int, tab *byte, out *[8]float32)

// rows8TQ4_0 wraps an eight-row table-taking Q4_0 kernel (rows8T).
func rows8TQ4_0(asm func(w *byte, wstride int, x *byte, nb int, tab *byte, out *[8]float32)) func(w []byte, wstride int, x, tab []byte, out *[8]float32) {
	return func(w []byte, wstride int, x, tab []byte, out *[8]float32) {
		nb := (len(w) - 7*wstride) / bytesQ4
		if nb <= 0 {
			*out = [8]float32{}
			return
		}
		_ = x[nb*bytesQ80-1]
		_ = tab[nb*token1Q8_0-1]
		asm(&w[0], wstride, &x[0], nb, &tab[0], out)
	}
}

//go:noescape
func q4_Kq8_Kr4AVX2(w *byte, wstride int, x *byte, nb int, out *[4]float32)

//go:noescape
func q6_Kq8_Kr4AVX2(w *byte, wstride int, x *byte, nb int, out *[4]float32)

//go:noescape
func q4_0q8_0r8x8AVX2(w *byte, x *byte, nb int, tab *byte, out *[8]float32)

//go:noescape
func q4_0q8_0r8x8AVX512(w *byte, x *byte, nb int, tab *byte, out *[8]float32)

// rows8X8Q4_0 wraps an eight-row Q4_0 x8 kernel (rows8i.go).
func rows8X8Q4_0(asm func(w *byte, x *byte, nb int, tab *byte, out *[8]float32)) func(w, x, tab []byte, out *[8]float32) {
	return func(w, x, tab []byte, out *[8]float32) {
		nb := len(w) / bytesQ4x8
		if nb <= 0 {
			*out = [8]float32{}
			return
		}
		_ = x[nb*bytesQ80-1]
		_ = tab[nb*token1Q8_0-1]
		asm(&w[0], &x[0], nb, &tab[0], out)
	}
}

//go:noescape
func deinterleave8Q4_0AVX2(dst *byte, wrb int, src *byte, nb int)

// deinterleave8Q4_0 wraps deinterleave8Q4_0AVX2 (Kernel.Deinterleave8).
func deinterleave8Q4_0(dst []byte, wrb int, src []byte) {
	nb := wrb / bytesQ4
	if nb == 0 {
		return
	}
	_ = dst[8*wrb-1]
	_ = src[nb*bytesQ4x8-1]
	deinterleave8Q4_0AVX2(&dst[0], wrb, &src[0], nb)
}

//go:noescape
func q8_0q8_0r8x8AVX2(w *byte, x *byte, nb int, tab *byte, out *[8]float32)

//go:noescape
func q8_0q8_0r8x8AVX512(w *byte, x *byte, nb int, tab *byte, out *[8]float32)

//go:noescape
func deinterleave8Q8_0AVX2(dst *byte, wrb int, src *byte, nb int)

// rows8X8Q8_0 wraps an eight-row Q8_0 x8 kernel (rows8i.go).
func rows8X8Q8_0(asm func(w *byte, x *byte, nb int, tab *byte, out *[8]float32)) func(w, x, tab []byte, out *[8]float32) {
	return func(w, x, tab []byte, out *[8]float32) {
		nb := len(w) / bytesQ80x8
		if nb <= 0 {
			*out = [8]float32{}
			return
		}
		_ = x[nb*bytesQ80-1]
		_ = tab[nb*token1Q8_0-1]
		asm(&w[0], &x[0], nb, &tab[0], out)
	}
}

// deinterleave8Q8_0 wraps deinterleave8Q8_0AVX2 (Kernel.Deinterleave8).
func deinterleave8Q8_0(dst []byte, wrb int, src []byte) {
	nb := wrb / bytesQ80
	if nb == 0 {
		return
	}
	_ = dst[8*wrb-1]
	_ = src[nb*bytesQ80x8-1]
	deinterleave8Q8_0AVX2(&dst[0], wrb, &src[0], nb)
}
