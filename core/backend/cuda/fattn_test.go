package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/memview"
)

// TestFlashAttention: prefill attention (more than one query) over an F16
// cache on the flash kernels, against the CPU: every instantiated head
// size, GQA groups of 1, 4 and 7 (rows of a block spanning tokens
// unevenly), batches that end in a partial block, earlier positions in the
// cache (tiles seen by some rows only), cache lengths that end in a
// partial tile (one odd), soft-cap, a peaked softmax (large scores), and a
// mask that is not causal (holes in the middle of a row; there the cells
// no row sees hold NaN, which no output may show: the CPU skips them);
// each with the scores kept in shared memory between the passes and
// computed again (nokeep), and a cache too long to keep them (6000
// positions, head size 128).
// Each case also runs head size 128 on the 512-thread kernel (wide), and
// the head sizes of the tensor-core kernels on those (mma; the NMSE each
// case logs is theirs).
func TestFlashAttention(t *testing.T) {
	t.Run("mma", func(t *testing.T) { testFlashAttention(t, false, false, false) })
	for _, noKeep := range []bool{false, true} {
		for _, wide := range []bool{false, true} {
			t.Run(fmt.Sprintf("nokeep%v/wide%v", noKeep, wide), func(t *testing.T) { testFlashAttention(t, true, noKeep, wide) })
		}
	}
}

func testFlashAttention(t *testing.T, exact, noKeep, wide bool) {
	g := gpu(t)
	exact0, all0, noKeep0, wide0 := g.fattnExact, g.fattnMMAAll, g.fattnNoKeep, g.fattnWide
	// (fattnMMAAll: the shared test backend may hold quantized weights of
	// earlier tests.)
	g.fattnExact, g.fattnMMAAll, g.fattnNoKeep, g.fattnWide = exact, !exact, noKeep, wide
	defer func() { g.fattnExact, g.fattnMMAAll, g.fattnNoKeep, g.fattnWide = exact0, all0, noKeep0, wide0 }()
	r := rand.New(rand.NewPCG(31, 32))
	for _, tc := range []struct {
		hd, heads, kvHeads, past, T, kvLen int
		softCap, qScale                    float32
		holes                              bool
	}{
		{64, 8, 2, 0, 2, 256, 0, 1, false},
		{64, 8, 2, 200, 33, 256, 0, 1, false},
		{128, 32, 8, 0, 512, 512, 0, 1, false},
		{128, 32, 8, 37, 100, 300, 0, 4, false},
		{128, 14, 2, 300, 65, 1100, 0, 1, false},
		{96, 4, 4, 5, 40, 256, 0, 1, true},
		{64, 8, 2, 100, 40, 256, 0, 1, true},
		{128, 16, 4, 37, 50, 301, 0, 1, true},
		{256, 8, 4, 10, 70, 512, 50, 1, false},
		{128, 16, 8, 63, 7, 256, 30, 2, false},
		{128, 8, 2, 5990, 5, 6000, 0, 1, false},
	} {
		hd := tc.hd
		ctx := max(1100, tc.kvLen)
		mmaName, mma := g.fattnMMAFor(hd, tc.T, tc.kvLen)
		if !exact && !mma {
			continue // head sizes without a tensor-core kernel: the exact runs cover them
		}
		fk := g.fattnFor(hd)
		wantKeep := !mma && !noKeep && fattnShared(hd, fk)+fattnSeenShared(tc.kvLen)+fattnKeepShared(fk.rows, tc.kvLen) <= g.dv.smemOptin/fk.perSM-1024
		if tc.kvLen == 6000 && wantKeep && fk.perSM == 2 {
			t.Fatalf("a cache of 6000 positions keeps its scores (%d bytes): the case meant to recompute them does not", fattnKeepShared(fk.rows, tc.kvLen))
		}
		t.Run(fmt.Sprintf("hd%d/h%d-kv%d/past%d/T%d/kv%d/cap%g/q%g/holes%v", hd, tc.heads, tc.kvHeads, tc.past, tc.T, tc.kvLen, tc.softCap, tc.qScale, tc.holes), func(t *testing.T) {
			rowLen := hd * tc.kvHeads
			fill := kvFill{gguf.TypeF16, int64(rowLen), int64(ctx)}
			prevK := randF32(r, rowLen*ctx, 1)
			prevV := randF32(r, rowLen*ctx, 1)
			if tc.holes {
				// The holes before the batch and the cells after it: seen
				// by no row, and not written by the batch's stores.
				nan := float32(math.NaN())
				for j := range ctx {
					if j < tc.past && j%5 == 3 || j >= tc.past+tc.T {
						for e := range rowLen {
							prevK[j*rowLen+e], prevV[j*rowLen+e] = nan, nan
						}
					}
				}
			}
			rows := make([]int32, tc.T)
			for i := range rows {
				rows[i] = int32(tc.past + i)
			}
			mask := make([]float32, tc.kvLen*tc.T)
			for i := 0; i < tc.T; i++ {
				for j := range tc.kvLen {
					if j > tc.past+i || (tc.holes && j%5 == 3 && j != tc.past+i) {
						mask[i*tc.kvLen+j] = float32(math.Inf(-1))
					}
				}
			}
			c := opCase{
				kv: fill.sizes(),
				inputs: fill.inputs(map[string][]byte{
					"q": memview.Bytes(randF32(r, hd*tc.heads*tc.T, tc.qScale)), "knew": memview.Bytes(randF32(r, rowLen*tc.T, 1)),
					"vnew": memview.Bytes(randF32(r, rowLen*tc.T, 1)), "rows": memview.Bytes(rows), "mask": memview.Bytes(mask),
				}, prevK, prevV),
				build: func(b *graph.Builder, _ func(string) *graph.Node) *graph.Node {
					kc, vc := fill.caches(b)
					rowsN := b.Input("rows", gguf.TypeI32, int64(tc.T))
					kc = b.StoreKV(kc, b.Input("knew", gguf.TypeF32, int64(rowLen), int64(tc.T)), rowsN, "kstore")
					vc = b.StoreKV(vc, b.Input("vnew", gguf.TypeF32, int64(rowLen), int64(tc.T)), rowsN, "vstore")
					q := b.Input("q", gguf.TypeF32, int64(hd), int64(tc.heads), int64(tc.T))
					m := b.Input("mask", gguf.TypeF32, int64(tc.kvLen), int64(tc.T))
					att := b.Attention(q, kc, vc, m, graph.AttentionParams{Scale: float32(1 / math.Sqrt(float64(hd))), KVHeads: tc.kvHeads, KVLen: tc.kvLen, SoftCap: tc.softCap}, "att")
					if !g.useFlash(att) && !fattnDisabled {
						t.Fatalf("attention of %d queries, head size %d, is not on the flash kernels", tc.T, hd)
					}
					return att
				},
			}
			kept := g.fattnKeeps
			g.l.counts = map[string]int{}
			compareWithin(t, c, g, 2, floatBound)
			if got := g.fattnKeeps > kept; got != wantKeep {
				t.Errorf("scores kept: %v, want %v (%d launches kept them)", got, wantKeep, g.fattnKeeps-kept)
			}
			name := fk.name
			if mma {
				name = mmaName
			}
			if g.l.counts[name] == 0 {
				t.Errorf("no %s launch: %v", name, g.l.counts)
			}
			g.l.counts = nil
		})
	}
}

// TestAttentionsShareTheirMaskScan: a step's attentions that read one mask
// node scan it once (attn_used's result reused), one that reads another
// mask scans that, and the next one of the first mask scans it again (a
// reuse there would take the other mask's cells in use: fewer here, so its
// rows would miss positions). Four prefill attentions over one cache
// (masks A, A, B, A) against the CPU's bits, eager, captured, replayed.
func TestAttentionsShareTheirMaskScan(t *testing.T) {
	g := oneBackend(t)
	// The exact kernels (a backend without quantized weights would take the
	// tensor-core ones, whose last bits are their own).
	defer func(e bool) { g.fattnExact = e }(g.fattnExact)
	g.fattnExact = true
	r := rand.New(rand.NewPCG(35, 36))
	const hd, heads, kvHeads, past, T, kvLen, ctx = 64, 8, 2, 100, 40, 256, 256
	rowLen := hd * kvHeads
	fill := kvFill{gguf.TypeF16, int64(rowLen), ctx}
	rows := make([]int32, T)
	for i := range rows {
		rows[i] = int32(past + i)
	}
	// A: causal after past cells; B: only the first past/2 cells.
	maskA, maskB := make([]float32, kvLen*T), make([]float32, kvLen*T)
	for i := 0; i < T; i++ {
		for j := range kvLen {
			if j > past+i {
				maskA[i*kvLen+j] = float32(math.Inf(-1))
			}
			if j > past/2 {
				maskB[i*kvLen+j] = float32(math.Inf(-1))
			}
		}
	}
	c := opCase{
		kv: fill.sizes(),
		inputs: fill.inputs(map[string][]byte{
			"q1": memview.Bytes(randF32(r, hd*heads*T, 1)), "q2": memview.Bytes(randF32(r, hd*heads*T, 1)),
			"knew": memview.Bytes(randF32(r, rowLen*T, 1)), "vnew": memview.Bytes(randF32(r, rowLen*T, 1)),
			"rows": memview.Bytes(rows), "ma": memview.Bytes(maskA), "mb": memview.Bytes(maskB),
		}, randF32(r, rowLen*ctx, 1), randF32(r, rowLen*ctx, 1)),
		build: func(b *graph.Builder, _ func(string) *graph.Node) *graph.Node {
			kc, vc := fill.caches(b)
			rowsN := b.Input("rows", gguf.TypeI32, T)
			kc = b.StoreKV(kc, b.Input("knew", gguf.TypeF32, int64(rowLen), T), rowsN, "kstore")
			vc = b.StoreKV(vc, b.Input("vnew", gguf.TypeF32, int64(rowLen), T), rowsN, "vstore")
			q1 := b.Input("q1", gguf.TypeF32, hd, heads, T)
			q2 := b.Input("q2", gguf.TypeF32, hd, heads, T)
			ma := b.Input("ma", gguf.TypeF32, kvLen, T)
			mb := b.Input("mb", gguf.TypeF32, kvLen, T)
			p := graph.AttentionParams{Scale: 0.125, KVHeads: kvHeads, KVLen: kvLen}
			a1 := b.Attention(q1, kc, vc, ma, p, "a1")
			a2 := b.Attention(q2, kc, vc, ma, p, "a2")
			a3 := b.Attention(q1, kc, vc, mb, p, "a3")
			a4 := b.Attention(q2, kc, vc, ma, p, "a4")
			if !g.useFlash(a1) {
				t.Fatal("the attentions are not on the flash kernels")
			}
			return b.Add(b.Add(b.Add(a1, a2, "s12"), a3, "s123"), a4, "out")
		},
	}
	scans, reuses := g.l.counts["attn_used"], g.usedReuses
	compareExact(t, c, g, 3) // eager, captured, replayed
	scans, reuses = g.l.counts["attn_used"]-scans, g.usedReuses-reuses
	if reuses == 0 || scans != 3*reuses {
		t.Errorf("%d attn_used launches and %d reuses, want three a reuse (masks A, A, B, A in each encode)", scans, reuses)
	}
}
