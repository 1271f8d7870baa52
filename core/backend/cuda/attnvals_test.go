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
			for _, tc := range []attnValCase{
				{128, 32, 8, 511, 640, 0, false, gguf.TypeQ4_0},
				{128, 8, 2, 300, 400, 0, true, gguf.TypeQ5_1},
				{64, 8, 8, 700, 800, 0, false, 0},
				{96, 6, 2, 1400, 1500, 0, true, gguf.TypeQ4_0},
				{256, 8, 4, 330, 352, 30, false, 0},
				{128, 14, 2, 95, 128, 0, false, gguf.TypeQ4_K},
			} {
				t.Run(tc.String(), func(t *testing.T) {
					hd := tc.hd
					before := g.l.counts[fmt.Sprintf("attn_x_vals_%d", hd)] + g.l.counts[fmt.Sprintf("attn_x_values_%d", hd)]
					runAttnValCase(t, g, r, tc)
					want := fmt.Sprintf("attn_x_vals_%d", hd)
					if old {
						want = fmt.Sprintf("attn_x_values_%d", hd)
					}
					if got := g.l.counts[want]; got == 0 || g.l.counts[fmt.Sprintf("attn_x_vals_%d", hd)]+g.l.counts[fmt.Sprintf("attn_x_values_%d", hd)] == before {
						t.Errorf("no %s launch: %v", want, g.l.counts)
					}
				})
			}
			if q := g.l.counts["quant_q8_0"] + g.l.counts["quant_q8_1"]; q != 0 {
				t.Errorf("the attention's q8_0/q8_1 output ran as %d separate quantizations: %v", q, g.l.counts)
			}
			if old && g.l.counts["attn_x_vals_128"] != 0 || !old && g.l.counts["attn_x_values_128"] != 0 {
				t.Errorf("the other values kernel ran: %v", g.l.counts)
			}
		})
	}
}

// attnValCase is one token's attention over a cache of ctx rows whose
// first past+1 are visible (holes: every seventh hidden too), and, when
// wt is set, a mat-mul of type wt after it (whose activation
// quantization the attention kernel may do).
type attnValCase struct {
	hd, heads, kvHeads, past, ctx int
	softCap                       float32
	holes                         bool
	wt                            gguf.GGMLType // 0: no mat-mul after
}

func (tc attnValCase) String() string {
	return fmt.Sprintf("hd%d/h%d-kv%d/past%d/ctx%d/cap%g/holes%v/%v", tc.hd, tc.heads, tc.kvHeads, tc.past, tc.ctx, tc.softCap, tc.holes, tc.wt)
}

// runAttnValCase runs tc on g and on the CPU and requires the same bits
// (three steps on g: captured and replayed), and the attention counters
// zero afterwards (every kernel that counts leaves them so).
func runAttnValCase(t *testing.T, g *Backend, r *rand.Rand, tc attnValCase) {
	t.Helper()
	hd, rowLen := tc.hd, tc.hd*tc.kvHeads
	fill := kvFill{gguf.TypeF16, int64(rowLen), int64(tc.ctx)}
	mask := make([]float32, tc.ctx)
	for j := range mask {
		if j > tc.past || (tc.holes && j%7 == 2) {
			mask[j] = float32(math.Inf(-1))
		}
	}
	ws := map[string]tensor{}
	if tc.wt != 0 {
		ws["wo"] = quantized(t, tc.wt, hd*tc.heads, 64, r)
	}
	compareExact(t, opCase{
		kv:      fill.sizes(),
		weights: ws,
		inputs: fill.inputs(map[string][]byte{"q": memview.Bytes(randF32(r, hd*tc.heads, 1)), "mask": memview.Bytes(mask)},
			randF32(r, rowLen*tc.ctx, 1), randF32(r, rowLen*tc.ctx, 1)),
		build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
			kc, vc := fill.caches(b)
			q := b.Input("q", gguf.TypeF32, int64(hd), int64(tc.heads), 1)
			att := b.Attention(q, kc, vc, b.Input("mask", gguf.TypeF32, int64(tc.ctx), 1),
				graph.AttentionParams{Scale: float32(1 / math.Sqrt(float64(hd))), KVHeads: tc.kvHeads, KVLen: tc.ctx, SoftCap: tc.softCap}, "att")
			if tc.wt == 0 {
				return att
			}
			// The mat-mul reads the attention node itself (as a model's
			// output projection does), so the attention may quantize for it.
			return b.Add(b.MatMul(wf("wo"), att, "o"), b.View(att, "head", 0, 64, 1), "out")
		},
	}, g, 3)
	counters := make([]uint32, counterBytes/4)
	if err := g.dv.t.do(func() error { return g.dv.download(memview.Bytes(counters), g.dv.counters, nil) }); err != nil {
		t.Fatal(err)
	}
	for i, c := range counters {
		if c != 0 {
			t.Fatalf("counter %d is %d after the run, want every counter zero", i, c)
		}
	}
}

// TestAttentionQuantizesQ8K: one token's attention followed by a K-quant
// mat-mul, whose q8_K activation blocks (256 elements, across heads) the
// attention kernel's warps quantize (q8k_arrive: the eighth warp to write
// a block's elements) — in the one-block kernel (short rows) and in the
// split values kernel (long rows) — bit for bit the CPU's, with no
// quant_q8_k launch; with MINFER_CUDA_DECODE=attnq8k the separate
// quantization runs instead, with the same bits. Head sizes 64 (a block
// spans four heads), 96 (blocks straddle heads), 128 and 256; Q4_K and
// Q6_K weights.
func TestAttentionQuantizesQ8K(t *testing.T) {
	for _, split := range []bool{false, true} {
		for _, fused := range []bool{true, false} {
			t.Run(fmt.Sprintf("split%v/fused%v", split, fused), func(t *testing.T) {
				g := gpu(t)
				g.mvV1 = false
				off := defaultDecodeOff
				if split {
					off += ",one"
				}
				if !fused {
					off += ",attnq8k"
				}
				g.off = parseDecodeOff(off)
				g.l.counts = map[string]int{}
				r := rand.New(rand.NewPCG(53, 54))
				past, ctx := 100, 128
				if split {
					past, ctx = 600, 704
				}
				for _, tc := range []attnValCase{
					{128, 32, 8, past, ctx, 0, false, gguf.TypeQ4_K},
					{64, 8, 8, past, ctx, 0, true, gguf.TypeQ4_K},
					{96, 8, 2, past, ctx, 0, false, gguf.TypeQ6_K},
					{256, 8, 4, past, ctx, 0, true, gguf.TypeQ4_K},
				} {
					t.Run(tc.String(), func(t *testing.T) { runAttnValCase(t, g, r, tc) })
				}
				kernel := "attn_x_one_128"
				if split {
					kernel = "attn_x_vals_128"
				}
				if g.l.counts[kernel] == 0 {
					t.Errorf("no %s launch: %v", kernel, g.l.counts)
				}
				if q := g.l.counts["quant_q8_k"]; fused && q != 0 || !fused && q == 0 {
					t.Errorf("quant_q8_k launched %d times (fused %v): %v", q, fused, g.l.counts)
				}
			})
		}
	}
}
