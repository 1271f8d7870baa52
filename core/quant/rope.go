package quant

// Rotary position embedding kernels (ggml's rope, as the CPU backend's rope
// op computes it). cs holds the interleaved cosines and sines of one token,
// cs[2i] = cos θ_i and cs[2i+1] = sin θ_i, and each rotation is written as
// ggml-cpu's compiler contracts it: x0·cos − x1·sin is fma(x0, cos, −(x1·sin))
// and x0·sin + x1·cos is fma(x0, sin, x1·cos), the products inside rounded.
// out and x may be the same slice.

// RopePairs rotates the adjacent pairs (x[2i], x[2i+1]) for i < len(cs)/2
// (ggml's normal mode) into out.
func RopePairs(out, x, cs []float32) {
	n := len(cs) &^ 1
	cur.ropePairs(out[:n:n], x[:n:n], cs[:n:n])
}

// RopeHalves rotates the pairs (x[i], x[i+h]) with h = len(cs)/2, for
// i < h (NeoX mode) into out.
func RopeHalves(out, x, cs []float32) {
	n := len(cs) &^ 1
	cur.ropeHalves(out[:n:n], x[:n:n], cs[:n:n])
}

func ropePairsGeneric(out, x, cs []float32) {
	for i := 0; i+1 < len(cs); i += 2 {
		c, s := cs[i], cs[i+1]
		x0, x1 := x[i], x[i+1]
		out[i] = FMA32(x0, c, -(x1 * s))
		out[i+1] = FMA32(x0, s, x1*c)
	}
}

func ropeHalvesGeneric(out, x, cs []float32) {
	h := len(cs) / 2
	for i := 0; i < h; i++ {
		c, s := cs[2*i], cs[2*i+1]
		x0, x1 := x[i], x[i+h]
		out[i] = FMA32(x0, c, -(x1 * s))
		out[i+h] = FMA32(x0, s, x1*c)
	}
}
