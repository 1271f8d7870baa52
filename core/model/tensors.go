package model

import "fmt"

// Tensor names, each written once: the tensor lists (Arch.Tensors) and
// the graph builders read these. Block tensors are "blk.N." + the name.
const (
	tTokEmbd          = "token_embd.weight"
	tOutputNorm       = "output_norm.weight"
	tOutput           = "output.weight"
	tRopeFreqs        = "rope_freqs.weight"
	tRopeFactorsLong  = "rope_factors_long.weight"
	tRopeFactorsShort = "rope_factors_short.weight"

	tAttnNorm     = "attn_norm.weight"
	tAttnQ        = "attn_q.weight"
	tAttnK        = "attn_k.weight"
	tAttnV        = "attn_v.weight"
	tAttnQKV      = "attn_qkv.weight" // Q, K, V rows fused (Phi-3)
	tAttnQBias    = "attn_q.bias"
	tAttnKBias    = "attn_k.bias"
	tAttnVBias    = "attn_v.bias"
	tAttnQNorm    = "attn_q_norm.weight" // per-head RMSNorm weights (head size)
	tAttnKNorm    = "attn_k_norm.weight"
	tAttnOut      = "attn_output.weight"
	tAttnPostNorm = "post_attention_norm.weight"

	tFFNNorm     = "ffn_norm.weight"
	tFFNGate     = "ffn_gate.weight"
	tFFNUp       = "ffn_up.weight" // gate and up halves fused when the FFN is fused (Phi-3)
	tFFNDown     = "ffn_down.weight"
	tFFNPostNorm = "post_ffw_norm.weight"

	tFFNGateInp   = "ffn_gate_inp.weight" // the router: [n_embd, n_expert]
	tFFNGateExps  = "ffn_gate_exps.weight"
	tFFNUpExps    = "ffn_up_exps.weight"
	tFFNDownExps  = "ffn_down_exps.weight"
	tFFNGateInpSh = "ffn_gate_inp_shexp.weight" // the shared expert's gate: [n_embd]
	tFFNGateSh    = "ffn_gate_shexp.weight"
	tFFNUpSh      = "ffn_up_shexp.weight"
	tFFNDownSh    = "ffn_down_shexp.weight"
)

// blk is the name of block il's tensor t.
func blk(il int, t string) string { return fmt.Sprintf("blk.%d.%s", il, t) }
