package model

import (
	"fmt"

	"github.com/minfer/minfer/gguf"
)

// family describes one architecture as data: which pieces its block uses.
// One builder (block.go) reads it; each family's entry (archs.go) reads
// beside its llama.cpp build_* function.
type family struct {
	name string
	neox bool // NeoX rotary pairs (i, i+d/2)

	bias       biasKind
	fusedQKV   bool // one attn_qkv weight, split by views (Phi-3)
	qkNorm     bool // per-head RMSNorm of Q and K before rope (Qwen3, Gemma 3)
	postNorms  bool // RMSNorm after attention and after the FFN too (Gemma)
	embedScale bool // embeddings scaled by √n_embd (Gemma)
	preScaleQ  bool // Q scaled by QScale before attention, q·k unscaled (Gemma, Phi-3)
	softCaps   bool // attention-logit and final-logit soft caps (Gemma 2)
	ffn        ffnKind
	moe        moeKind
	shared     bool // a shared expert with a sigmoid gate (Qwen-MoE)
	normTopK   bool // the top-k expert weights renormalised to sum 1 (Mixtral)
	ropeFacts  bool // rope_factors_long/short chosen by context (Phi-3)

	// hparams reads what the family adds to the llama-like metadata.
	hparams func(f *gguf.File, h *HParams) error
}

type biasKind uint8

const (
	biasNone     biasKind = iota // Q/K/V biases are not read
	biasOptional                 // read when blk.0.attn_q.bias exists (llama)
	biasRequired                 // the file must have them (Qwen2)
)

type ffnKind uint8

const (
	ffnSiLU      ffnKind = iota // silu(gate)·up
	ffnGELU                     // gelu(gate)·up (Gemma)
	ffnFusedSiLU                // ffn_up holds gate then up rows (Phi-3)
)

type moeKind uint8

const (
	moeNever  moeKind = iota
	moeIfAny          // routed experts when expert_count > 0 (llama/Mixtral)
	moeAlways         // routed experts required (Qwen-MoE)
)

func (a family) Name() string { return a.name }

// usesMoE reports whether the blocks of h route through experts.
func (a family) usesMoE(h HParams) bool {
	return a.moe == moeAlways || (a.moe == moeIfAny && h.NExpert > 0)
}

func (a family) HParams(f *gguf.File) (HParams, error) {
	h, err := readLlamaLike(f, a.name, a.neox)
	if err != nil {
		return h, err
	}
	switch a.bias {
	case biasNone:
		h.QKVBias = false
	case biasRequired:
		if !h.QKVBias {
			return h, fmt.Errorf("model: %s file has no blk.0.attn_q.bias", a.name)
		}
	}
	if a.moe == moeNever && h.NExpert > 0 {
		return h, fmt.Errorf("model: %s with %d experts: a mixture of experts is not supported for this architecture", a.name, h.NExpert)
	}
	if a.usesMoE(h) {
		if _, ok := f.Tensor(blk(0, tFFNGateExps)); !ok {
			if _, old := f.Tensor("blk.0.ffn_gate.0.weight"); old {
				return h, fmt.Errorf("model: %s mixture of experts stored one tensor per expert (an old conversion): re-convert it with a current llama.cpp to get %s", a.name, tFFNGateExps)
			}
		}
	}
	if a.moe == moeAlways && h.NExpert == 0 {
		return h, fmt.Errorf("model: %s.expert_count is missing or 0", a.name)
	}
	if !a.usesMoE(h) {
		h.NExpert, h.NExpertUsed, h.NFFExp, h.NFFShexp = 0, 0, 0, 0
	}
	if !a.shared {
		h.NFFShexp = 0
	}
	if a.hparams != nil {
		if err := a.hparams(f, &h); err != nil {
			return h, err
		}
	}
	return h, nil
}

func (a family) Tensors(h HParams) []TensorSpec {
	e, ff, v := int64(h.NEmbd), int64(h.NFF), int64(h.NVocab)
	q, kv, hd := int64(h.HeadDim*h.NHead), int64(h.KVRow()), int64(h.HeadDim)
	specs := []TensorSpec{
		{Name: tTokEmbd, Dims: []int64{e, v}},
		{Name: tOutputNorm, Dims: []int64{e}},
		{Name: tOutput, Dims: []int64{e, v}, Optional: h.TiedOutput},
	}
	if h.HasRopeFreq {
		specs = append(specs, TensorSpec{Name: tRopeFreqs, Dims: []int64{int64(h.RopeDims / 2)}})
	}
	if a.ropeFacts {
		specs = append(specs,
			TensorSpec{Name: tRopeFactorsLong, Dims: []int64{int64(h.RopeDims / 2)}, Optional: true},
			TensorSpec{Name: tRopeFactorsShort, Dims: []int64{int64(h.RopeDims / 2)}, Optional: true})
	}
	for il := 0; il < h.NLayer; il++ {
		add := func(t string, dims ...int64) {
			specs = append(specs, TensorSpec{Name: blk(il, t), Dims: dims})
		}
		add(tAttnNorm, e)
		if a.fusedQKV {
			add(tAttnQKV, e, q+2*kv)
		} else {
			add(tAttnQ, e, q)
			add(tAttnK, e, kv)
			add(tAttnV, e, kv)
		}
		if h.QKVBias {
			add(tAttnQBias, q)
			add(tAttnKBias, kv)
			add(tAttnVBias, kv)
		}
		if a.qkNorm {
			add(tAttnQNorm, hd)
			add(tAttnKNorm, hd)
		}
		add(tAttnOut, q, e)
		if a.postNorms {
			add(tAttnPostNorm, e)
		}
		add(tFFNNorm, e)
		switch {
		case a.usesMoE(h):
			nx, fe := int64(h.NExpert), int64(h.NFFExp)
			add(tFFNGateInp, e, nx)
			add(tFFNGateExps, e, fe, nx)
			add(tFFNUpExps, e, fe, nx)
			add(tFFNDownExps, fe, e, nx)
			if a.shared {
				fs := int64(h.NFFShexp)
				add(tFFNGateInpSh, e)
				add(tFFNGateSh, e, fs)
				add(tFFNUpSh, e, fs)
				add(tFFNDownSh, fs, e)
			}
		case a.ffn == ffnFusedSiLU:
			add(tFFNUp, e, 2*ff)
			add(tFFNDown, ff, e)
		default:
			add(tFFNGate, e, ff)
			add(tFFNUp, e, ff)
			add(tFFNDown, ff, e)
		}
		if a.postNorms {
			add(tFFNPostNorm, e)
		}
	}
	return specs
}
