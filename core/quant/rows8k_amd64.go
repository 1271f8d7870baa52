//go:build !noasm

package quant

// rows8X8x4Q6KPanels is the K x8 Q6_K group kernel (q6_Kq8_Kr4x4AVX512 on
// each half) on the four groups at w, stride bytes apart (out[8g:8g+8]
// group g's rows), in panels of k8PanelQ6K super-blocks: each panel of
// the eight half-groups in turn, every row's sum carried from panel to
// panel (the kernel adds onto out), so each row's super-blocks are still
// summed in order, one at a time: the same bits as Dot8RowsX8 on each
// group. tab unused.
func rows8X8x4Q6KPanels(w []byte, stride int, x, _ []byte, out *[32]float32) {
	h := stride / 2
	nb := h / (4 * bytesQ6K)
	*out = [32]float32{}
	if nb <= 0 {
		return
	}
	_ = w[4*stride-1]
	_ = x[nb*bytesQ8K-1]
	p := max(k8PanelQ6K, 1)
	for j := 0; j < nb; j += p {
		n := min(p, nb-j)
		for q := 0; q < 8; q++ {
			q6_Kq8_Kr4x4AVX512(&w[q*h+j*4*bytesQ6K], &x[j*bytesQ8K], n, (*[4]float32)(out[4*q:4*q+4]))
		}
	}
}
