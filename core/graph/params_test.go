package graph

import (
	"errors"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TestParamsOfIsTyped: the builder stores each op's own parameter struct and
// ParamsOf hands it back; a node carrying none, or another op's, is an
// error naming it, never a zero value read as a setting.
func TestParamsOfIsTyped(t *testing.T) {
	b := NewBuilder(Params{Tokens: 2})
	x := b.Input("x", gguf.TypeF32, 8, 2, 2)
	pos := b.Input("pos", gguf.TypeI32, 2)
	n := b.RMSNorm(x, 1e-5, "norm")
	r := b.Rope(x, pos, nil, RopeParams{Dims: 8, Mode: RopeNeoX, FreqBase: 1e4, FreqScale: 1}, "rope")
	if _, err := b.Finish(r); err != nil {
		t.Fatal(err)
	}
	if p, err := ParamsOf[NormParams](n); err != nil || p.Eps != 1e-5 {
		t.Errorf("norm params %+v, %v", p, err)
	}
	if p, err := ParamsOf[RopeParams](r); err != nil || p.Mode != RopeNeoX || p.Dims != 8 {
		t.Errorf("rope params %+v, %v", p, err)
	}
	if _, err := ParamsOf[RopeParams](n); !errors.Is(err, ErrParams) {
		t.Errorf("rope params of a norm: %v", err)
	}
	bare := &Node{Op: OpAttention, Name: "bare"}
	if _, err := ParamsOf[AttentionParams](bare); !errors.Is(err, ErrParams) {
		t.Errorf("attention without parameters: %v", err)
	}
	wrong := &Node{Op: OpRMSNorm, Params: RopeParams{}}
	if _, err := ParamsOf[RopeParams](wrong); !errors.Is(err, ErrParams) {
		t.Errorf("rope parameters on a norm node: %v", err)
	}
}

// TestBuilderRefusesBadAttentionParams: no kv heads is a build error, not a
// division by zero.
func TestBuilderRefusesBadAttentionParams(t *testing.T) {
	b := NewBuilder(Params{Tokens: 1})
	q := b.Input("q", gguf.TypeF32, 4, 2, 1)
	k := b.KV("k", gguf.TypeF16, 4, 8)
	m := b.Input("m", gguf.TypeF32, 8, 1)
	b.Attention(q, k, k, m, AttentionParams{Scale: 1, KVHeads: 0, KVLen: 8}, "att")
	if b.Err() == nil {
		t.Error("zero kv heads accepted")
	}
}
