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
	NCtx    int // cache rows per layer
	KVType  gguf.GGMLType
	Tensors func(name string) (*gguf.TensorInfo, bool)
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

// Input names shared by every architecture.
const (
	InTokens = "tokens"  // I32 [T]
	InPos    = "pos"     // I32 [T]: positions
	InKVRows = "kv_rows" // I32 [T]: cache rows written this step
	InMask   = "mask"    // F32 [KVLen, T]: 0 or -inf
)

// KVName is the persistent region of layer il's K or V cache.
func KVName(kind string, il int) string { return fmt.Sprintf("cache_%s.l%d", kind, il) }

type llama struct {
	name string
	neox bool
}

func init() {
	Register(llama{name: "llama"})
	// Qwen2: the llama block with Q/K/V biases and NeoX rotary pairs.
	Register(llama{name: "qwen2", neox: true})
}

func (a llama) Name() string { return a.name }

func (a llama) HParams(f *gguf.File) (HParams, error) {
	h, err := readLlamaLike(f, a.name, a.neox)
	if err != nil {
		return h, err
	}
	if a.name == "qwen2" && !h.QKVBias {
		return h, fmt.Errorf("model: qwen2 file has no blk.0.attn_q.bias")
	}
	return h, nil
}

func (a llama) Tensors(h HParams) []TensorSpec {
	e, ff, v := int64(h.NEmbd), int64(h.NFF), int64(h.NVocab)
	q, kv := int64(h.HeadDim*h.NHead), int64(h.KVRow())
	specs := []TensorSpec{
		{Name: "token_embd.weight", Dims: []int64{e, v}},
		{Name: "output_norm.weight", Dims: []int64{e}},
		{Name: "output.weight", Dims: []int64{e, v}, Optional: h.TiedOutput},
	}
	if h.HasRopeFreq {
		specs = append(specs, TensorSpec{Name: "rope_freqs.weight", Dims: []int64{int64(h.RopeDims / 2)}})
	}
	for il := 0; il < h.NLayer; il++ {
		p := fmt.Sprintf("blk.%d.", il)
		specs = append(specs,
			TensorSpec{Name: p + "attn_norm.weight", Dims: []int64{e}},
			TensorSpec{Name: p + "attn_q.weight", Dims: []int64{e, q}},
			TensorSpec{Name: p + "attn_k.weight", Dims: []int64{e, kv}},
			TensorSpec{Name: p + "attn_v.weight", Dims: []int64{e, kv}},
			TensorSpec{Name: p + "attn_output.weight", Dims: []int64{q, e}},
			TensorSpec{Name: p + "ffn_norm.weight", Dims: []int64{e}},
			TensorSpec{Name: p + "ffn_gate.weight", Dims: []int64{e, ff}},
			TensorSpec{Name: p + "ffn_up.weight", Dims: []int64{e, ff}},
			TensorSpec{Name: p + "ffn_down.weight", Dims: []int64{ff, e}},
		)
		if h.QKVBias {
			specs = append(specs,
				TensorSpec{Name: p + "attn_q.bias", Dims: []int64{q}},
				TensorSpec{Name: p + "attn_k.bias", Dims: []int64{kv}},
				TensorSpec{Name: p + "attn_v.bias", Dims: []int64{kv}},
			)
		}
	}
	return specs
}

// Build: the llama block as llama.cpp's build_llama computes it.
func (a llama) Build(b *Builder) (*graph.Node, error) {
	h, p := b.H, b.P
	T := int64(p.Tokens)
	tokens := b.Input(InTokens, gguf.TypeI32, T)
	pos := b.Input(InPos, gguf.TypeI32, T)
	rows := b.Input(InKVRows, gguf.TypeI32, T)
	mask := b.Input(InMask, gguf.TypeF32, int64(p.KVLen), T)

	b.SetLayer(graph.Unblocked)
	x := b.GetRows(b.W("token_embd.weight"), tokens, "inp_embd")
	var freqs *graph.Node
	if h.HasRopeFreq {
		freqs = b.W("rope_freqs.weight")
	}
	rope := graph.RopeParams{Dims: h.RopeDims, Mode: graph.RopeNormal, FreqBase: h.RopeBase, FreqScale: h.RopeScale}
	if h.RopeNeoX {
		rope.Mode = graph.RopeNeoX
	}
	scale := float32(1 / math.Sqrt(float64(h.HeadDim)))
	hd, nh, nkv := int64(h.HeadDim), int64(h.NHead), int64(h.NHeadKV)
	for il := 0; il < h.NLayer; il++ {
		b.SetLayer(il)
		w := func(s string) *graph.Node { return b.W(fmt.Sprintf("blk.%d.%s", il, s)) }
		name := func(s string) string { return fmt.Sprintf("%s-%d", s, il) }
		cur := b.Mul(b.RMSNorm(x, h.RMSEps, name("norm")), w("attn_norm.weight"), name("attn_norm"))
		q := b.MatMul(w("attn_q.weight"), cur, name("Qcur"))
		k := b.MatMul(w("attn_k.weight"), cur, name("Kcur"))
		v := b.MatMul(w("attn_v.weight"), cur, name("Vcur"))
		if h.QKVBias {
			q = b.Add(q, w("attn_q.bias"), name("Qcur_b"))
			k = b.Add(k, w("attn_k.bias"), name("Kcur_b"))
			v = b.Add(v, w("attn_v.bias"), name("Vcur_b"))
		}
		q = b.Rope(b.View(q, name("Q3"), 0, hd, nh, T), pos, freqs, rope, name("Qrope"))
		k = b.Rope(b.View(k, name("K3"), 0, hd, nkv, T), pos, freqs, rope, name("Krope"))
		kc := b.StoreKV(b.KV(KVName("k", il), b.KVType, int64(h.KVRow()), int64(b.NCtx)), b.View(k, name("K2"), 0, hd*nkv, T), rows, name("k_store"))
		vc := b.StoreKV(b.KV(KVName("v", il), b.KVType, int64(h.KVRow()), int64(b.NCtx)), v, rows, name("v_store"))
		att := b.Attention(q, kc, vc, mask, graph.AttentionParams{Scale: scale, KVHeads: h.NHeadKV, KVLen: p.KVLen}, name("kqv"))
		att = b.MatMul(w("attn_output.weight"), att, name("attn_out"))
		x = b.Add(att, x, name("ffn_inp"))
		cur = b.Mul(b.RMSNorm(x, h.RMSEps, name("ffn_norm0")), w("ffn_norm.weight"), name("ffn_norm"))
		g := b.MatMul(w("ffn_gate.weight"), cur, name("ffn_gate"))
		u := b.MatMul(w("ffn_up.weight"), cur, name("ffn_up"))
		cur = b.MatMul(w("ffn_down.weight"), b.SwiGLU(g, u, name("ffn_swiglu")), name("ffn_out"))
		x = b.Add(cur, x, name("l_out"))
	}
	b.SetLayer(graph.Unblocked)
	if !p.AllLogits && T > 1 {
		// Only the last position's logits are needed: a view, not a copy.
		x = b.View(x, "last_tok", (T-1)*int64(h.NEmbd)*4, int64(h.NEmbd), 1)
	}
	x = b.Mul(b.RMSNorm(x, h.RMSEps, "norm"), b.W("output_norm.weight"), "result_norm")
	head := "output.weight"
	if h.TiedOutput {
		head = "token_embd.weight"
	}
	return b.MatMul(b.W(head), x, "result_output"), b.Err()
}
