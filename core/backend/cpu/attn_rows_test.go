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

// TestAttentionGroupedSameBits: the grouped path (a KV head's q heads per
// job, one K and V row for all of them) gives the bits of the one-head
// path, for group sizes 1, 2, 4 and 8 and every divisor as the heads per
// job, head dimensions with a part past the 64-lane chunks or below one
// (40, 65, 80, 136), a decode row, causal prompts with holes and an
// all-masked row, F16 and F32 caches, with and without a soft cap, 1 and 2
// threads, at every kernel level. Some heads' q is large, so that their
// weights underflow to 0 for entries other heads take, and some V halves
// are infinite: a head that skips an entry must not see 0·inf.
func TestAttentionGroupedSameBits(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	ninf := float32(math.Inf(-1))
	type shape struct{ past, tokens, kvLen, headDim, heads, kvHeads int }
	shapes := []shape{
		{130, 1, 160, 64, 32, 4}, // the 1B decode row: group 8
		{190, 1, 224, 64, 8, 1},  // group 8, one KV head
		{60, 1, 96, 128, 8, 2},   // group 4
		{0, 37, 40, 64, 8, 4},    // group 2, prompt
		{50, 9, 96, 80, 8, 2},    // group 4, head dim with a tail
		{5, 20, 32, 40, 4, 1},    // below one chunk
		{100, 2, 128, 65, 6, 3},  // an odd head dim
		{200, 3, 256, 136, 4, 4}, // group 1
	}
	for _, threads := range []int{1, 2} {
		c := New(threads)
		for _, lvl := range quant.Levels() {
			restore := quant.ForceLevel(lvl)
			for _, cache := range []gguf.GGMLType{gguf.TypeF16, gguf.TypeF32} {
				for _, cs := range shapes {
					group := cs.heads / cs.kvHeads
					kvRow := cs.headDim * cs.kvHeads
					rows := cs.kvLen + 32
					var kc, vc []byte
					if cache == gguf.TypeF16 {
						k16, v16 := make([]uint16, rows*kvRow), make([]uint16, rows*kvRow)
						for i := range k16 {
							k16[i] = quant.F32ToF16(float32(r.NormFloat64()))
							v16[i] = quant.F32ToF16(float32(r.NormFloat64()))
							if r.Intn(500) == 0 {
								v16[i] = 0x7c00 // +inf
							}
						}
						kc, vc = u16bytes(k16), u16bytes(v16)
					} else {
						kc, vc = f32bytes(randRow(r, rows*kvRow, 1)), f32bytes(randRow(r, rows*kvRow, 1))
					}
					q := randRow(r, cs.tokens*cs.heads*cs.headDim, 2)
					for i := range q {
						if (i/cs.headDim)%3 == 1 {
							q[i] *= 40 // scores far apart: weights that underflow
						}
					}
					mask := make([]float32, cs.tokens*cs.kvLen)
					for tk := 0; tk < cs.tokens; tk++ {
						for j := 0; j < cs.kvLen; j++ {
							if j > cs.past+tk || r.Intn(9) == 0 {
								mask[tk*cs.kvLen+j] = ninf
							}
						}
					}
					if cs.tokens > 2 {
						for j := 0; j < cs.kvLen; j++ {
							mask[1*cs.kvLen+j] = ninf
						}
					}
					n := &graph.Node{Op: graph.OpAttention, Type: gguf.TypeF32,
						Src: [4]*graph.Node{
							{Shape: [4]int64{int64(cs.headDim), int64(cs.heads), int64(cs.tokens), 1}},
							{Type: cache}, {Type: cache}}}
					for _, softCap := range []float32{0, 30} {
						p := graph.AttentionParams{Scale: 0.125, KVHeads: cs.kvHeads, KVLen: cs.kvLen, SoftCap: softCap}
						want := make([]float32, len(q))
						attnPerHead = true
						err := c.attention(n, p, want, q, kc, vc, mask)
						attnPerHead = false
						if err != nil {
							t.Fatal(err)
						}
						for gs := 0; gs <= group; gs++ { // 0: attnGroupSize's choice
							if gs > 0 && group%gs != 0 {
								continue
							}
							attnGroupForce = gs
							got := make([]float32, len(q))
							err := c.attention(n, p, got, q, kc, vc, mask)
							attnGroupForce = 0
							if err != nil {
								t.Fatal(err)
							}
							for i := range got {
								if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
									t.Fatalf("%d threads %s %s %+v cap %g heads/job %d: out[%d] = %g (%#x), one head %g (%#x)",
										threads, lvl, cache, cs, softCap, gs, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
								}
							}
						}
					}
				}
			}
			restore()
		}
		c.Close()
	}
}

// TestScoreRowMatchesAttnScore: scoreRow against group16's general score
// loop (attnScore on float64(s) + 0, −inf for masked entries and those
// past kvLen, the running maxf) on edge scores (±0, ±inf, NaN, large) and
// masks (0, −0, finite biases, −inf), with kvLen below, at and above the
// row's length: the same bits, and the same maximum.
func TestScoreRowMatchesAttnScore(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	ninf := float32(math.Inf(-1))
	edge := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), ninf, float32(math.NaN()), 3e38, -3e38, 1e-40}
	for trial := 0; trial < 2000; trial++ {
		n := 1 + r.Intn(70)
		kvLen := max(1, n+r.Intn(9)-4)
		sg := make([]float32, n)
		mr := make([]float32, max(n, kvLen))
		for j := range sg {
			sg[j] = float32(r.NormFloat64() * 10)
			if r.Intn(6) == 0 {
				sg[j] = edge[r.Intn(len(edge))]
			}
		}
		for j := range mr {
			switch r.Intn(6) {
			case 0:
				mr[j] = ninf
			case 1:
				mr[j] = float32(math.Copysign(0, -1))
			case 2:
				mr[j] = float32(r.NormFloat64())
			}
		}
		scale := float32(0.125)
		want := append([]float32(nil), sg...)
		wmax := ninf
		for j := range want {
			if j >= kvLen || math.IsInf(float64(mr[j]), -1) {
				want[j] = ninf
				continue
			}
			s := float64(want[j])
			var tail float64
			s += tail
			want[j] = attnScore(s, 0, scale, mr[j])
			wmax = maxf(wmax, want[j])
		}
		got := append([]float32(nil), sg...)
		gmax := scoreRow(got, mr, kvLen, scale)
		if math.Float32bits(gmax) != math.Float32bits(wmax) {
			t.Fatalf("trial %d: max %g (%#x), want %g (%#x)", trial, gmax, math.Float32bits(gmax), wmax, math.Float32bits(wmax))
		}
		for j := range got {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("trial %d: score %d of %d (kvLen %d, s %g, m %g): %g (%#x), want %g (%#x)", trial, j, n, kvLen, sg[j], mr[j], got[j], math.Float32bits(got[j]), want[j], math.Float32bits(want[j]))
			}
		}
	}
}
