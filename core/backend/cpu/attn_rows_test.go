package cpu

import (
	"math"
	"math/rand"
	"testing"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// TestAttentionRowLimitSameBits: leaving out each row's entries past its
// last unmasked one (in whole 16-lane blocks) gives the bits of the run
// over all nkv entries, for causal prompt masks after a history, a decode
// row, rows with holes, an all-masked row, F16 and F32 caches, GQA, with
// and without a soft cap, at every kernel level.
func TestAttentionRowLimitSameBits(t *testing.T) {
	c := New(2)
	defer c.Close()
	r := rand.New(rand.NewSource(7))
	ninf := float32(math.Inf(-1))
	for _, lvl := range quant.Levels() {
		restore := quant.ForceLevel(lvl)
		for _, cache := range []gguf.GGMLType{gguf.TypeF16, gguf.TypeF32} {
			for _, cs := range []struct{ past, tokens, kvLen, headDim, heads, kvHeads int }{
				{0, 37, 40, 64, 4, 2}, {50, 9, 96, 64, 4, 4}, {130, 1, 160, 64, 8, 2}, {5, 20, 32, 80, 2, 1}, {200, 3, 256, 128, 2, 2},
			} {
				for _, softCap := range []float32{0, 30} {
					kvRow := cs.headDim * cs.kvHeads
					rows := cs.kvLen + 32 // a cache holds at least the padded length
					var kc, vc []byte
					if cache == gguf.TypeF16 {
						k16, v16 := make([]uint16, rows*kvRow), make([]uint16, rows*kvRow)
						for i := range k16 {
							k16[i] = quant.F32ToF16(float32(r.NormFloat64()))
							v16[i] = quant.F32ToF16(float32(r.NormFloat64()))
						}
						kc, vc = u16bytes(k16), u16bytes(v16)
					} else {
						kc, vc = f32bytes(randRow(r, rows*kvRow, 1)), f32bytes(randRow(r, rows*kvRow, 1))
					}
					q := randRow(r, cs.tokens*cs.heads*cs.headDim, 2)
					mask := make([]float32, cs.tokens*cs.kvLen)
					for tk := 0; tk < cs.tokens; tk++ {
						for j := 0; j < cs.kvLen; j++ {
							if j > cs.past+tk || r.Intn(9) == 0 { // causal, with holes
								mask[tk*cs.kvLen+j] = ninf
							}
						}
					}
					if cs.tokens > 2 {
						for j := 0; j < cs.kvLen; j++ {
							mask[1*cs.kvLen+j] = ninf // an all-masked row
						}
					}
					n := &graph.Node{Op: graph.OpAttention, Type: gguf.TypeF32,
						Src: [4]*graph.Node{
							{Shape: [4]int64{int64(cs.headDim), int64(cs.heads), int64(cs.tokens), 1}},
							{Type: cache}, {Type: cache}}}
					p := graph.AttentionParams{Scale: 0.125, KVHeads: cs.kvHeads, KVLen: cs.kvLen, SoftCap: softCap}
					got := make([]float32, len(q))
					want := make([]float32, len(q))
					if err := c.attention(n, p, got, q, kc, vc, mask); err != nil {
						t.Fatal(err)
					}
					attnFullRows = true
					err := c.attention(n, p, want, q, kc, vc, mask)
					attnFullRows = false
					if err != nil {
						t.Fatal(err)
					}
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s %s %+v cap %g: out[%d] = %g, over all entries %g", lvl, cache, cs, softCap, i, got[i], want[i])
						}
					}
				}
			}
		}
		restore()
	}
}

func u16bytes(v []uint16) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		b[2*i], b[2*i+1] = byte(x), byte(x>>8)
	}
	return b
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		u := math.Float32bits(x)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return b
}
