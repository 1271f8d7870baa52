//go:build !noasm

package quant

//go:noescape
func q4_0q8_0r4x8AVX2(w *byte, wstride int, tile *byte, nb int, out *[32]float32)

//go:noescape
func q8_0q8_0r4x8AVX2(w *byte, wstride int, tile *byte, nb int, out *[32]float32)

func dotR4x8Q4_0Q8_0AVX2(w []byte, wstride int, tile []byte, out *[32]float32) {
	nb := len(tile) / tile8Block
	if nb == 0 {
		*out = [32]float32{}
		return
	}
	_ = w[3*wstride+nb*bytesQ4-1]
	q4_0q8_0r4x8AVX2(&w[0], wstride, &tile[0], nb, out)
}

func dotR4x8Q8_0Q8_0AVX2(w []byte, wstride int, tile []byte, out *[32]float32) {
	nb := len(tile) / tile8Block
	if nb == 0 {
		*out = [32]float32{}
		return
	}
	_ = w[3*wstride+nb*bytesQ80-1]
	q8_0q8_0r4x8AVX2(&w[0], wstride, &tile[0], nb, out)
}
