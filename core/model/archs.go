package model

import (
	"fmt"
	"math"

	"github.com/minfer/minfer/gguf"
)

// The architectures Minfer runs. Each entry reads beside llama.cpp's
// build_* function of the same name (src/llama-model.cpp).
func init() {
	// build_llama: pre-norm block, SwiGLU FFN; Mixtral-style routed
	// experts (top-k weights renormalised) when expert_count > 0.
	Register(family{name: "llama", bias: biasOptional, moe: moeIfAny, normTopK: true})
	// build_qwen2: llama with Q/K/V biases and NeoX rope.
	Register(family{name: "qwen2", neox: true, bias: biasRequired})
	// build_qwen2moe: qwen2 with routed experts (weights as the softmax
	// gives them) and a shared expert behind a sigmoid gate.
	Register(family{name: "qwen2moe", neox: true, bias: biasRequired, moe: moeAlways, shared: true})
	// build_qwen3: qwen2 without biases, per-head RMSNorm of Q and K.
	Register(family{name: "qwen3", neox: true, qkNorm: true})
	// build_phi3: fused QKV and gate/up weights, Q pre-scaled, sliding
	// window on every block when the file has one, long/short rope factors.
	Register(family{name: "phi3", neox: true, fusedQKV: true, ffn: ffnFusedSiLU, preScaleQ: true, ropeFacts: true,
		hparams: phi3HParams})
	// build_gemma2: √n_embd-scaled embeddings, four norms per block, GELU
	// FFN, soft caps, sliding window on even blocks.
	Register(family{name: "gemma2", neox: true, postNorms: true, embedScale: true, preScaleQ: true, softCaps: true, ffn: ffnGELU,
		hparams: gemma2HParams})
	// build_gemma3: gemma2 without caps, with Q/K norms, five sliding
	// blocks to one global, sliding blocks on their own rope.
	Register(family{name: "gemma3", neox: true, postNorms: true, embedScale: true, preScaleQ: true, qkNorm: true, ffn: ffnGELU,
		hparams: gemma3HParams})
}

func phi3HParams(f *gguf.File, h *HParams) error {
	// llama.cpp (build_phi3) uses the sliding-window mask on every block
	// when the file names a window; Phi-4 names none.
	h.SWAPattern = 0
	r := &metaReader{m: &f.Meta, arch: h.Arch}
	h.NCtxOrig = r.uint("rope.scaling.original_context_length", h.NCtxTrain, false)
	// LongRoPE files (Phi-3 128k) also scale cos/sin by an attention
	// factor, which the rope op does not apply yet: refuse rather than
	// compute something else.
	if af := r.float("rope.scaling.attn_factor", 1); af != 1 && r.err == nil {
		return fmt.Errorf("model: phi3.rope.scaling.attn_factor %g (LongRoPE) is not supported yet", af)
	}
	return r.err
}

// gemmaQScale: llama.cpp scales Gemma's queries by 1/√head_size, except for
// the 27B models (1/√(n_embd/n_head)), which it recognises by block count.
func gemmaQScale(h *HParams, blocks27B int) {
	if h.NLayer == blocks27B {
		h.QScale = float32(1 / math.Sqrt(float64(h.NEmbd/h.NHead)))
	}
}

func gemma2HParams(f *gguf.File, h *HParams) error {
	r := &metaReader{m: &f.Meta, arch: h.Arch}
	h.AttnSoftCap = r.float("attn_logit_softcapping", 50)
	h.FinalSoftCap = r.float("final_logit_softcapping", 30)
	h.SlidingWindow = r.uint("attention.sliding_window", 4096, false)
	h.SWAPattern = 2 // even blocks slide
	gemmaQScale(h, 46)
	if r.err != nil {
		return r.err
	}
	if h.AttnSoftCap < 0 || h.FinalSoftCap < 0 {
		return fmt.Errorf("model: gemma2 soft caps %g, %g must not be negative", h.AttnSoftCap, h.FinalSoftCap)
	}
	return nil
}

func gemma3HParams(f *gguf.File, h *HParams) error {
	if h.SlidingWindow <= 0 {
		return fmt.Errorf("model: gemma3.attention.sliding_window is missing")
	}
	h.SWAPattern = 6 // blocks 5, 11, … are global
	h.SWARopeBase, h.SWARopeScale = 10000, 1
	gemmaQScale(h, 62)
	return nil
}
