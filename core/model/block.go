package model

import (
	"fmt"
	"math"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/gguf"
)

// Builder gives an architecture what it needs to build one step's graph.
type Builder struct {
	*graph.Builder
	H       HParams
	P       graph.Params
	NCtx    int // context length: cache rows of a full (not sliding) block
	KVType  gguf.GGMLType
	Tensors func(name string) (*gguf.TensorInfo, bool)
	// DeviceFusion: blocks below P.GPULayers read the fused device forms
	// the loader registered for them (fused.go).
	DeviceFusion bool
}

// W references a model tensor by name.
func (b *Builder) W(name string) *graph.Node {
	ti, ok := b.Tensors(name)
	if !ok {
		b.Builder.Weight(name, gguf.TypeF32, []int64{0}) // records a shape error naming it
		return nil
	}
	return b.Builder.Weight(name, ti.Type, ti.Dims)
}

// rowsOf is a view of rows [from, from+n) of a 2-D weight: a fused
// weight's part, used in place.
func (b *Builder) rowsOf(w *graph.Node, from, n int64, name string) *graph.Node {
	rb, err := w.Type.RowBytes(w.Shape[0])
	if err != nil {
		b.Builder.View(w, name, 0, 0) // records the error
		return w
	}
	return b.View(w, name, from*rb, w.Shape[0], n)
}

// Input names shared by every architecture.
const (
	InTokens    = "tokens"      // I32 [T]
	InPos       = "pos"         // I32 [T]: positions
	InKVRows    = "kv_rows"     // I32 [T]: cache rows written this step (full blocks)
	InMask      = "mask"        // F32 [KVLen, T]: 0 or -inf (full blocks)
	InKVRowsSWA = "kv_rows_swa" // I32 [T]: ring rows written this step (sliding blocks)
	InMaskSWA   = "mask_swa"    // F32 [ring rows read, T]: the windowed mask over the ring
)

// KVName is the persistent region of layer il's K or V cache.
func KVName(kind string, il int) string { return fmt.Sprintf("cache_%s.l%d", kind, il) }

// SWAKVLen is how many ring rows a sliding block's attention reads in a
// step whose full blocks read kvLen rows.
func (h HParams) SWAKVLen(nCtx, kvLen int) int {
	if h.SlidingBlocks() == 0 {
		return kvLen
	}
	return min(kvLen, h.SWARows(nCtx))
}

// stepInputs are one step's host-filled inputs.
type stepInputs struct {
	tokens, pos      *graph.Node
	rows, mask       *graph.Node // full blocks (nil when every block slides)
	rowsSWA, maskSWA *graph.Node // sliding blocks (nil when none slides)
	kvLen, kvLenSWA  int
}

func (a family) inputs(b *Builder) stepInputs {
	h, p := b.H, b.P
	T := int64(p.Tokens)
	in := stepInputs{kvLen: p.KVLen}
	in.tokens = b.Input(InTokens, gguf.TypeI32, T)
	in.pos = b.Input(InPos, gguf.TypeI32, T)
	if n := h.SlidingBlocks(); n < h.NLayer {
		in.rows = b.Input(InKVRows, gguf.TypeI32, T)
		in.mask = b.Input(InMask, gguf.TypeF32, int64(p.KVLen), T)
	}
	if h.SlidingBlocks() > 0 {
		in.kvLenSWA = h.SWAKVLen(b.NCtx, p.KVLen)
		in.rowsSWA = b.Input(InKVRowsSWA, gguf.TypeI32, T)
		in.maskSWA = b.Input(InMaskSWA, gguf.TypeF32, int64(in.kvLenSWA), T)
	}
	return in
}

// norm is RMSNorm times its weight (llama.cpp's build_norm, LLM_NORM_RMS).
func (b *Builder) norm(x *graph.Node, weight, name string) *graph.Node {
	return b.Mul(b.RMSNorm(x, b.H.RMSEps, name+"_0"), b.W(weight), name)
}

// Build: one step of the family's graph, as llama.cpp's build_* for it.
func (a family) Build(b *Builder) (*graph.Node, error) {
	h, p := b.H, b.P
	T := int64(p.Tokens)
	in := a.inputs(b)

	b.SetLayer(graph.Unblocked)
	x := b.GetRows(b.W(tTokEmbd), in.tokens, "inp_embd")
	if a.embedScale {
		x = b.Scale(x, float32(math.Sqrt(float64(h.NEmbd))), "inp_scaled")
	}
	var freqs *graph.Node
	switch {
	case h.HasRopeFreq:
		freqs = b.W(tRopeFreqs)
	case a.ropeFacts:
		freqs = a.ropeFactors(b)
	}
	for il := 0; il < h.NLayer; il++ {
		b.SetLayer(il)
		name := func(s string) string { return fmt.Sprintf("%s-%d", s, il) }
		cur := b.norm(x, blk(il, tAttnNorm), name("attn_norm"))
		cur = a.attention(b, il, cur, in, freqs)
		if a.postNorms {
			cur = b.norm(cur, blk(il, tAttnPostNorm), name("attn_post_norm"))
		}
		x = b.Add(cur, x, name("ffn_inp"))
		cur = b.norm(x, blk(il, tFFNNorm), name("ffn_norm"))
		if a.usesMoE(h) {
			cur = a.moeFFN(b, il, cur)
		} else {
			cur = a.denseFFN(b, il, cur)
		}
		if a.postNorms {
			cur = b.norm(cur, blk(il, tFFNPostNorm), name("ffn_post_norm"))
		}
		x = b.Add(cur, x, name("l_out"))
	}
	b.SetLayer(graph.Unblocked)
	if !p.AllLogits && T > 1 {
		// Only the last position's logits are needed: a view, not a copy.
		x = b.View(x, "last_tok", (T-1)*int64(h.NEmbd)*4, int64(h.NEmbd), 1)
	}
	x = b.norm(x, tOutputNorm, "result_norm")
	head := tOutput
	if h.TiedOutput {
		head = tTokEmbd
	}
	out := b.MatMul(b.W(head), x, "result_output")
	if a.softCaps && h.FinalSoftCap > 0 {
		out = b.SoftCap(out, h.FinalSoftCap, "result_capped")
	}
	return out, b.Err()
}

// attention is the self-attention of block il on the normed input cur.
func (a family) attention(b *Builder, il int, cur *graph.Node, in stepInputs, freqs *graph.Node) *graph.Node {
	h, T := b.H, int64(b.P.Tokens)
	hd, nh, nkv := int64(h.HeadDim), int64(h.NHead), int64(h.NHeadKV)
	w := func(t string) *graph.Node { return b.W(blk(il, t)) }
	name := func(s string) string { return fmt.Sprintf("%s-%d", s, il) }
	var q, k, v *graph.Node
	fu, fused := a.fusion(b, il, tFusedQKV)
	switch {
	case fused && T == 1:
		// One mat-vec over the Q|K|V rows; the output's parts are views.
		qkv := b.MatMul(b.fusedWeight(fu), cur, name("QKVcur"))
		q = b.View(qkv, name("Qcur"), 0, hd*nh)
		k = b.View(qkv, name("Kcur"), 4*hd*nh, hd*nkv)
		v = b.View(qkv, name("Vcur"), 4*hd*(nh+nkv), hd*nkv)
	default:
		var wq, wk, wv *graph.Node
		if a.fusedQKV || fused {
			var qkv *graph.Node
			if fused {
				qkv = b.fusedWeight(fu)
			} else {
				qkv = w(tAttnQKV)
			}
			wq = b.rowsOf(qkv, 0, hd*nh, name("wq"))
			wk = b.rowsOf(qkv, hd*nh, hd*nkv, name("wk"))
			wv = b.rowsOf(qkv, hd*(nh+nkv), hd*nkv, name("wv"))
		} else {
			wq, wk, wv = w(tAttnQ), w(tAttnK), w(tAttnV)
		}
		q = b.MatMul(wq, cur, name("Qcur"))
		k = b.MatMul(wk, cur, name("Kcur"))
		v = b.MatMul(wv, cur, name("Vcur"))
	}
	if h.QKVBias {
		q = b.Add(q, w(tAttnQBias), name("Qcur_b"))
		k = b.Add(k, w(tAttnKBias), name("Kcur_b"))
		v = b.Add(v, w(tAttnVBias), name("Vcur_b"))
	}
	q = b.View(q, name("Q3"), 0, hd, nh, T)
	k = b.View(k, name("K3"), 0, hd, nkv, T)
	if a.qkNorm {
		q = b.norm(q, blk(il, tAttnQNorm), name("Qcur_normed"))
		k = b.norm(k, blk(il, tAttnKNorm), name("Kcur_normed"))
	}
	sliding := h.Sliding(il)
	rope := graph.RopeParams{Dims: h.RopeDims, Mode: graph.RopeNormal, FreqBase: h.RopeBase, FreqScale: h.RopeScale}
	if h.RopeNeoX {
		rope.Mode = graph.RopeNeoX
	}
	if sliding {
		rope.FreqBase, rope.FreqScale = h.SWARopeBase, h.SWARopeScale
	}
	q = b.Rope(q, in.pos, freqs, rope, name("Qrope"))
	k = b.Rope(k, in.pos, freqs, rope, name("Krope"))
	scale := h.QScale
	if a.preScaleQ {
		q = b.Scale(q, h.QScale, name("Qscaled"))
		scale = 1
	}
	rows, mask, kvLen := in.rows, in.mask, in.kvLen
	if sliding {
		rows, mask, kvLen = in.rowsSWA, in.maskSWA, in.kvLenSWA
	}
	cacheRows, rowLen := int64(h.CacheRows(il, b.NCtx)), int64(h.KVRow())
	kc := b.StoreKV(b.KV(KVName("k", il), b.KVType, rowLen, cacheRows), b.View(k, name("K2"), 0, hd*nkv, T), rows, name("k_store"))
	vc := b.StoreKV(b.KV(KVName("v", il), b.KVType, rowLen, cacheRows), v, rows, name("v_store"))
	var softCap float32
	if a.softCaps {
		softCap = h.AttnSoftCap
	}
	att := b.Attention(q, kc, vc, mask, graph.AttentionParams{Scale: scale, KVHeads: h.NHeadKV, KVLen: kvLen, SoftCap: softCap}, name("kqv"))
	return b.MatMul(w(tAttnOut), att, name("attn_out"))
}

// denseFFN is the gated feed-forward of block il.
func (a family) denseFFN(b *Builder, il int, cur *graph.Node) *graph.Node {
	w := func(t string) *graph.Node { return b.W(blk(il, t)) }
	name := func(s string) string { return fmt.Sprintf("%s-%d", s, il) }
	var g, u *graph.Node
	ff := int64(b.H.NFF)
	fu, fused := a.fusion(b, il, tFusedGU)
	switch {
	case fused && b.P.Tokens == 1:
		// One mat-vec over the gate|up rows; the output's halves are views.
		gu := b.MatMul(b.fusedWeight(fu), cur, name("ffn_gate_up"))
		g = b.View(gu, name("ffn_gate"), 0, ff)
		u = b.View(gu, name("ffn_up"), 4*ff, ff)
	case fused || a.ffn == ffnFusedSiLU:
		var up *graph.Node
		if fused {
			up = b.fusedWeight(fu)
		} else {
			up = w(tFFNUp)
		}
		g = b.MatMul(b.rowsOf(up, 0, ff, name("w_gate")), cur, name("ffn_gate"))
		u = b.MatMul(b.rowsOf(up, ff, ff, name("w_up")), cur, name("ffn_up"))
	default:
		g = b.MatMul(w(tFFNGate), cur, name("ffn_gate"))
		u = b.MatMul(w(tFFNUp), cur, name("ffn_up"))
	}
	var par *graph.Node
	if a.ffn == ffnGELU {
		par = b.Mul(b.GELU(g, name("ffn_gelu")), u, name("ffn_geglu"))
	} else {
		par = b.SwiGLU(g, u, name("ffn_swiglu"))
	}
	return b.MatMul(w(tFFNDown), par, name("ffn_out"))
}

// moeFFN is llama.cpp's build_moe_ffn: router, softmax, top-k, the k
// weights (renormalised for Mixtral), the selected experts' SiLU-gated
// FFNs read in place from the 3-D expert tensors, their weighted sum; plus
// Qwen's shared expert scaled by its sigmoid gate.
func (a family) moeFFN(b *Builder, il int, cur *graph.Node) *graph.Node {
	h := b.H
	w := func(t string) *graph.Node { return b.W(blk(il, t)) }
	name := func(s string) string { return fmt.Sprintf("%s-%d", s, il) }
	probs := b.SoftMax(b.MatMul(w(tFFNGateInp), cur, name("ffn_moe_logits")), name("ffn_moe_probs"))
	ids := b.TopK(probs, h.NExpertUsed, name("ffn_moe_topk"))
	weights := b.MoEWeights(probs, ids, a.normTopK, name("ffn_moe_weights"))
	up := b.MatMulID(w(tFFNUpExps), cur, ids, name("ffn_moe_up"))
	gate := b.MatMulID(w(tFFNGateExps), cur, ids, name("ffn_moe_gate"))
	par := b.SwiGLU(gate, up, name("ffn_moe_swiglu"))
	experts := b.MatMulID(w(tFFNDownExps), par, ids, name("ffn_moe_down"))
	out := b.WeightedSum(experts, weights, name("ffn_moe_out"))
	if !a.shared {
		return out
	}
	gateInp := b.MatMul(w(tFFNGateInpSh), cur, name("ffn_shexp_gate_inp"))
	sg := b.MatMul(w(tFFNGateSh), cur, name("ffn_shexp_gate"))
	su := b.MatMul(w(tFFNUpSh), cur, name("ffn_shexp_up"))
	sh := b.MatMul(w(tFFNDownSh), b.SwiGLU(sg, su, name("ffn_shexp_swiglu")), name("ffn_shexp"))
	sh = b.Mul(sh, b.Sigmoid(gateInp, name("ffn_shexp_gate_sig")), name("ffn_shexp_gated"))
	return b.Add(out, sh, name("ffn_moe_shexp"))
}

// ropeFactors picks Phi-3's long or short rope factors as llama.cpp does:
// long when the context exceeds the original training context.
func (a family) ropeFactors(b *Builder) *graph.Node {
	pick := tRopeFactorsShort
	if b.NCtx > b.H.NCtxOrig {
		pick = tRopeFactorsLong
	}
	if _, ok := b.Tensors(pick); !ok {
		return nil
	}
	return b.W(pick)
}
