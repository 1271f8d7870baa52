//go:build !noasm

package quant

// AVX2 rope kernels (rope_amd64.s) for the full groups of 8; the rest of a
// row goes through the generic body, which computes each pair alone.

//go:noescape
func ropePairsAVX2(out, x, cs *float32, n8 int)

//go:noescape
func ropeHalvesAVX2(out, x, cs *float32, h, n8 int)

func ropePairsAVX2Row(out, x, cs []float32) {
	n8 := len(cs) / 8
	if n8 > 0 {
		ropePairsAVX2(&out[0], &x[0], &cs[0], n8)
	}
	k := 8 * n8
	ropePairsGeneric(out[k:], x[k:], cs[k:])
}

func ropeHalvesAVX2Row(out, x, cs []float32) {
	h := len(cs) / 2
	n8 := h / 8
	if n8 > 0 {
		ropeHalvesAVX2(&out[0], &x[0], &cs[0], h, n8)
	}
	for i := 8 * n8; i < h; i++ {
		c, s := cs[2*i], cs[2*i+1]
		x0, x1 := x[i], x[i+h]
		out[i] = FMA32(x0, c, -(x1 * s))
		out[i+h] = FMA32(x0, s, x1*c)
	}
}
