package graph

import "github.com/minfer/minfer/gguf"

// The ops the architectures beyond llama need: Gemma's scales, caps and
// GELU, and mixture-of-experts routing.

func (b *Builder) unary(op Op, x *Node, p OpParams, name string) *Node {
	if x.Type != gguf.TypeF32 {
		b.fail("%s %q: input is %s, want F32", op, name, x.Type)
	}
	return b.add(&Node{Op: op, Type: gguf.TypeF32, Shape: x.Shape, Src: [4]*Node{x}, Name: name, Params: p})
}

// Scale multiplies every element of x by s.
func (b *Builder) Scale(x *Node, s float32, name string) *Node {
	return b.unary(OpScale, x, ScaleParams{S: s}, name)
}

// SoftCap is cap·tanh(x/cap) element-wise (Gemma 2's logit caps).
func (b *Builder) SoftCap(x *Node, cap float32, name string) *Node {
	if !(cap > 0) {
		b.fail("soft_cap %q: cap %g must be positive", name, cap)
	}
	return b.unary(OpSoftCap, x, SoftCapParams{Cap: cap}, name)
}

// GELU is the tanh-form GELU as ggml computes it (an F16 table).
func (b *Builder) GELU(x *Node, name string) *Node { return b.unary(OpGELU, x, nil, name) }

// Sigmoid is silu(x)/x, the form llama.cpp's Qwen-MoE shared-expert gate
// uses (so results round as they do there).
func (b *Builder) Sigmoid(x *Node, name string) *Node { return b.unary(OpSigmoid, x, nil, name) }

// SoftMax normalises each row of x.
func (b *Builder) SoftMax(x *Node, name string) *Node { return b.unary(OpSoftMax, x, nil, name) }

// TopK returns, per row of x, the indices of its k largest values, largest
// first: I32 [k, rows].
func (b *Builder) TopK(x *Node, k int, name string) *Node {
	if k <= 0 || int64(k) > x.Shape[0] {
		b.fail("top_k %q: k %d of %d", name, k, x.Shape[0])
		k = 1
	}
	return b.add(&Node{Op: OpTopK, Type: gguf.TypeI32, Shape: shape(int64(k), x.Rows()), Src: [4]*Node{x}, Name: name, Params: TopKParams{K: k}})
}

// MoEWeights picks, for each token, the probabilities probs [experts, T] of
// the experts ids [k, T] selected, renormalised to sum 1 when normalize.
func (b *Builder) MoEWeights(probs, ids *Node, normalize bool, name string) *Node {
	if ids.Type != gguf.TypeI32 || ids.Shape[1] != probs.Shape[1] || ids.Shape[0] > probs.Shape[0] {
		b.fail("moe_weights %q: probabilities %v, ids %s%v", name, probs.Shape, ids.Type, ids.Shape)
	}
	return b.add(&Node{Op: OpMoEWeights, Type: gguf.TypeF32, Shape: ids.Shape, Src: [4]*Node{probs, ids}, Name: name,
		Params: MoEWeightsParams{Normalize: normalize}})
}

// MatMulID multiplies, for each token t and slot k, the activations x by the
// expert ids[k, t] of experts ([in, out, n_expert]: an expert is a view of
// out rows). x is [in, T] (the same input for every slot) or [in, k, T].
// The result is [out, k, T]. Only the selected experts' rows are read.
func (b *Builder) MatMulID(experts, x, ids *Node, name string) *Node {
	k, T := ids.Shape[0], ids.Shape[1]
	okX := x.Shape[0] == experts.Shape[0] && ((x.Shape[1] == T && x.Shape[2] == 1) || (x.Shape[1] == k && x.Shape[2] == T))
	if ids.Type != gguf.TypeI32 || !okX || experts.Shape[3] != 1 {
		b.fail("mat_mul_id %q: experts %v, x %v, ids %s%v", name, experts.Shape, x.Shape, ids.Type, ids.Shape)
	}
	return b.add(&Node{Op: OpMatMulID, Type: gguf.TypeF32, Shape: shape(experts.Shape[1], k, T), Src: [4]*Node{experts, x, ids}, Name: name})
}

// WeightedSum adds x[:, k, t]·w[k, t] over k, in k order: [n, T].
func (b *Builder) WeightedSum(x, w *Node, name string) *Node {
	if w.Shape[0] != x.Shape[1] || w.Shape[1] != x.Shape[2] {
		b.fail("weighted_sum %q: x %v, weights %v", name, x.Shape, w.Shape)
	}
	return b.add(&Node{Op: OpWeightedSum, Type: gguf.TypeF32, Shape: shape(x.Shape[0], x.Shape[2]), Src: [4]*Node{x, w}, Name: name})
}
