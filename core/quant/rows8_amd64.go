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
