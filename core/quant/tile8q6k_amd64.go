//go:build !noasm

package quant

// Go entry points of the Q6_K tile kernels (tile8q6k_amd64.s).

//go:noescape
func q6_Kq8_Kr4x8AVX2(u, tile *byte, nb int, out *[32]float32)

//go:noescape
func q6_Kq8_Kr2x16AVX2(u *byte, r0 int, ta, tb *byte, nb int, out *float32)

//go:noescape
func prep4Q6_KAVX2asm(w *byte, wstride, adv, nb int, u *byte)

// dotR4x8Q6_KQ8_KAVX2 runs the four rows prepared in u against tile.
func dotR4x8Q6_KQ8_KAVX2(_ []byte, _ int, u, tile []byte, out *[32]float32) {
	nb := len(tile) / tile8Q6KBlock
	if nb == 0 {
		*out = [32]float32{}
		return
	}
	_ = u[nb*prep4Q6_KBlock-1]
	q6_Kq8_Kr4x8AVX2(&u[0], &tile[0], nb, out)
}

// dotR2x16Q6_KQ8_KAVX2 runs rows r0, r0+1 of the four rows prepared in u
// against tiles ta and tb.
func dotR2x16Q6_KQ8_KAVX2(_ []byte, _ int, u []byte, r0 int, ta, tb []byte, out []float32) {
	nb := len(ta) / tile8Q6KBlock
	_ = out[48-1]
	if nb == 0 {
		clear(out[:16])
		clear(out[32:48])
		return
	}
	_ = u[nb*prep4Q6_KBlock-1]
	_ = tb[nb*tile8Q6KBlock-1]
	q6_Kq8_Kr2x16AVX2(&u[0], r0, &ta[0], &tb[0], nb, &out[0])
}

// prep4Q6_KAVX2 prepares the four rows (wstride apart) in w into u.
func prep4Q6_KAVX2(w []byte, wstride int, u []byte) {
	nb := len(u) / prep4Q6_KBlock
	if nb == 0 {
		return
	}
	_ = w[3*wstride+nb*bytesQ6K-1]
	prep4Q6_KAVX2asm(&w[0], wstride, bytesQ6K, nb, &u[0])
}

// prep4x8Q6_KAVX2 is prep4x8Q6_KGeneric.
var prep4x8Q6_KAVX2 = prepK8(prep4Q6_KAVX2asm, bytesQ6K, prep4Q6_KBlock)
