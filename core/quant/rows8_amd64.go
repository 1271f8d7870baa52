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
func q4_Kq8_Kr4sAVX2(w *byte, wstride int, x *byte, nb int, out *[4]float32, adv, pf int)

//go:noescape
func q6_Kq8_Kr4sAVX2(w *byte, wstride int, x *byte, nb int, out *[4]float32, adv, pf int)

// q4_Kq8_Kr4AVX2 is the four-row Q4_K kernel on the file layout (rows
// wstride apart, the next call's rows prefetched).
func q4_Kq8_Kr4AVX2(w *byte, wstride int, x *byte, nb int, out *[4]float32) {
	q4_Kq8_Kr4sAVX2(w, wstride, x, nb, out, bytesQ4K, 4*wstride)
}

// q6_Kq8_Kr4AVX2 is the four-row Q6_K kernel on the file layout.
func q6_Kq8_Kr4AVX2(w *byte, wstride int, x *byte, nb int, out *[4]float32) {
	q6_Kq8_Kr4sAVX2(w, wstride, x, nb, out, bytesQ6K, 4*wstride)
}

// q4_Kq8_Kr4x4AVX2 and q6_Kq8_Kr4x4AVX2 are the four-row kernels on one
// half of a K x8 group (rows8k.go): one stream, prefetched
// x8PrefetchQ4_KAVX2 / x8PrefetchQ6_KAVX2 bytes ahead.
func q4_Kq8_Kr4x4AVX2(w *byte, x *byte, nb int, out *[4]float32) {
	q4_Kq8_Kr4sAVX2(w, bytesQ4K, x, nb, out, 4*bytesQ4K, x8PrefetchQ4_KAVX2)
}

func q6_Kq8_Kr4x4AVX2(w *byte, x *byte, nb int, out *[4]float32) {
	q6_Kq8_Kr4sAVX2(w, bytesQ6K, x, nb, out, 4*bytesQ6K, x8PrefetchQ6_KAVX2)
}

//go:noescape
func q4_0q8_0r8x8AVX2(w *byte, x *byte, nb int, tab *byte, out *[8]float32)

//go:noescape
func q4_0q8_0r8x8AVX512(w *byte, x *byte, nb int, tab *byte, out *[8]float32)

//go:noescape
func deinterleave8Q4_0AVX2(dst *byte, wrb int, src *byte, nb int)

//go:noescape
func q8_0q8_0r8x8AVX2(w *byte, x *byte, nb int, tab *byte, out *[8]float32)

//go:noescape
func q8_0q8_0r8x8AVX512(w *byte, x *byte, nb int, tab *byte, out *[8]float32)

//go:noescape
func deinterleave8Q8_0AVX2(dst *byte, wrb int, src *byte, nb int)

// rows8X8 wraps an eight-row x8 kernel (rows8i.go) whose groups take
// group bytes a block (bytesQ4x8, bytesQ80x8).
func rows8X8(asm func(w *byte, x *byte, nb int, tab *byte, out *[8]float32), group int) func(w, x, tab []byte, out *[8]float32) {
	return func(w, x, tab []byte, out *[8]float32) {
		nb := len(w) / group
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
func q8_0q8_0r8x8x4AVX512(w *byte, stride int, x *byte, nb int, tab *byte, out *[32]float32)

// groups4 wraps a four-group decode kernel (DotGroups4: the col16 and x8
// ones) whose groups take group bytes a block and out one float a row of
// the four groups.
func groups4[O ~[32]float32 | ~[64]float32](asm func(w *byte, stride int, x *byte, nb int, tab *byte, out *O), group int) func(w []byte, stride int, x, tab []byte, out *O) {
	return func(w []byte, stride int, x, tab []byte, out *O) {
		nb := stride / group
		if nb <= 0 {
			var zero O
			*out = zero
			return
		}
		_ = w[3*stride+nb*group-1]
		_ = x[nb*bytesQ80-1]
		_ = tab[nb*token1Q8_0-1]
		asm(&w[0], stride, &x[0], nb, &tab[0], out)
	}
}

// deinterleave8 wraps a Deinterleave8 kernel of a type with blocks of
// block bytes and x8 groups of group bytes a block.
func deinterleave8(asm func(dst *byte, wrb int, src *byte, nb int), block, group int) func(dst []byte, wrb int, src []byte) {
	return func(dst []byte, wrb int, src []byte) {
		nb := wrb / block
		if nb == 0 {
			return
		}
		_ = dst[8*wrb-1]
		_ = src[nb*group-1]
		asm(&dst[0], wrb, &src[0], nb)
	}
}
