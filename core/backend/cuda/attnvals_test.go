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

// TestSplitAttentionValues: one token's attention on the split kernels
// (attn_x_scores, then attn_x_vals_* — or, with MINFER_CUDA_DECODE=vals,
// the older attn_x_values_*) against the CPU's bits: every head size the
// kernels take, GQA groups, cache lengths whose padded n_kv is a multiple
// of 64 and one that leaves a 32-position tail, long rows, a mask with
// holes (zero weights skipped), soft-capping, and the output alone or
// quantized for the mat-mul after it (q8_0 for Q4_0, q8_1 for Q5_1); the
// launch counts show which values kernel ran.
func TestSplitAttentionValues(t *testing.T) {
	for _, old := range []bool{false, true} {
		t.Run(fmt.Sprintf("values-old%v", old), func(t *testing.T) {
			g := gpu(t)
			g.mvV1 = false
			g.off = parseDecodeOff(defaultDecodeOff + ",one")
			g.off.vals = old
			g.l.counts = map[string]int{}
			r := rand.New(rand.NewPCG(51, 52))
			for _, tc := range []struct {
				hd, heads, kvHeads, past, ctx int
				softCap                       float32
				holes                         bool
				wt                            gguf.GGMLType // 0: no mat-mul after
			}{
				{128, 32, 8, 511, 640, 0, false, gguf.TypeQ4_0},
				{128, 8, 2, 300, 400, 0, true, gguf.TypeQ5_1},
				{64, 8, 8, 700, 800, 0, false, 0},
				{96, 6, 2, 1400, 1500, 0, true, gguf.TypeQ4_0},
				{256, 8, 4, 330, 352, 30, false, 0},
				{128, 14, 2, 95, 128, 0, false, gguf.TypeQ4_K},
			} {
				name := fmt.Sprintf("hd%d/h%d-kv%d/past%d/ctx%d/cap%g/holes%v/%v", tc.hd, tc.heads, tc.kvHeads, tc.past, tc.ctx, tc.softCap, tc.holes, tc.wt)
				t.Run(name, func(t *testing.T) {
					hd, rowLen := tc.hd, tc.hd*tc.kvHeads
					rb, _ := gguf.TypeF16.RowBytes(int64(rowLen))
					mask := make([]float32, tc.ctx)
					for j := range mask {
						if j > tc.past || (tc.holes && j%7 == 2) {
							mask[j] = float32(math.Inf(-1))
						}
					}
					allRows := make([]int32, tc.ctx)
					for i := range allRows {
						allRows[i] = int32(i)
					}
					ws := map[string]tensor{}
					if tc.wt != 0 {
						ws["wo"] = quantized(t, tc.wt, hd*tc.heads, 64, r)
					}
					before := g.l.counts[fmt.Sprintf("attn_x_vals_%d", hd)] + g.l.counts[fmt.Sprintf("attn_x_values_%d", hd)]
					compareExact(t, opCase{
						kv:      map[string]int64{"k": rb * int64(tc.ctx), "v": rb * int64(tc.ctx)},
						weights: ws,
						inputs: map[string][]byte{
							"q": memview.Bytes(randF32(r, hd*tc.heads, 1)), "mask": memview.Bytes(mask), "allrows": memview.Bytes(allRows),
							"kall": memview.Bytes(randF32(r, rowLen*tc.ctx, 1)), "vall": memview.Bytes(randF32(r, rowLen*tc.ctx, 1)),
						},
						build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
							all := b.Input("allrows", gguf.TypeI32, int64(tc.ctx))
							kc := b.StoreKV(b.KV("k", gguf.TypeF16, int64(rowLen), int64(tc.ctx)), b.Input("kall", gguf.TypeF32, int64(rowLen), int64(tc.ctx)), all, "kfill")
							vc := b.StoreKV(b.KV("v", gguf.TypeF16, int64(rowLen), int64(tc.ctx)), b.Input("vall", gguf.TypeF32, int64(rowLen), int64(tc.ctx)), all, "vfill")
							q := b.Input("q", gguf.TypeF32, int64(hd), int64(tc.heads), 1)
							att := b.Attention(q, kc, vc, b.Input("mask", gguf.TypeF32, int64(tc.ctx), 1),
								graph.AttentionParams{Scale: float32(1 / math.Sqrt(float64(hd))), KVHeads: tc.kvHeads, KVLen: tc.ctx, SoftCap: tc.softCap}, "att")
							if tc.wt == 0 {
								return att
							}
							flat := b.View(att, "attf", 0, int64(hd*tc.heads), 1)
							return b.Add(b.MatMul(wf("wo"), flat, "o"), b.View(flat, "head", 0, 64, 1), "out")
						},
					}, g, 3)
					want := fmt.Sprintf("attn_x_vals_%d", hd)
					if old {
						want = fmt.Sprintf("attn_x_values_%d", hd)
					}
					if got := g.l.counts[want]; got == 0 || g.l.counts[fmt.Sprintf("attn_x_vals_%d", hd)]+g.l.counts[fmt.Sprintf("attn_x_values_%d", hd)] == before {
						t.Errorf("no %s launch: %v", want, g.l.counts)
					}
				})
			}
			if old && g.l.counts["attn_x_vals_128"] != 0 || !old && g.l.counts["attn_x_values_128"] != 0 {
				t.Errorf("the other values kernel ran: %v", g.l.counts)
			}
		})
	}
}
