package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/memview"
)

// compareWithin is compare with the NMSE bound given here (the tensor-core
// mat-muls and flash attention: quantBound, floatBound). Both follow the
// CPU's float order (issue 11), so compare's count of outputs whose bits
// differ is 0 where they work as meant; the assertion stays the bound.
func compareWithin(t *testing.T, c opCase, gpuB *Backend, steps int, bound float64) {
	t.Helper()
	c.bound = bound
	compare(t, c, gpuB, steps)
}

// quantizedTypes are the quantized weight types: the tensor-core kernels
// decode those in mmqKernels, the rest (Q5_0, Q5_1, Q2_K) take the batched
// mat-vec at every batch size.
var quantizedTypes = []gguf.GGMLType{gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1,
	gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K}

// TestMMQEveryWeightType: batches from the threshold up to a prefill
// chunk, for every quantized weight type, against the CPU's vec-dot:
// odd row counts (partial row tiles), token counts that end in a partial
// tile, rows of one and several k-steps, and (the 32-blocks) rows that end
// in a partial k-step (96, 4128 elements). Batches below the threshold are
// the batched mat-vec's (TestMatMulEveryWeightType).
func TestMMQEveryWeightType(t *testing.T) {
	eachTileWidth(t, gpu(t), testMMQEveryWeightType)
}

// eachTileWidth runs test on g with the tensor-core kernels' tiles of 64
// and of 128 tokens in turn, whatever the batch sizes.
func eachTileWidth(t *testing.T, g *Backend, test func(*testing.T, *Backend)) {
	for _, tiles := range []int64{64, 128} {
		t.Run(fmt.Sprintf("tiles%d", tiles), func(t *testing.T) {
			defer func(was int64) { mmqTiles = was }(mmqTiles)
			mmqTiles = tiles
			test(t, g)
		})
	}
}

func testMMQEveryWeightType(t *testing.T, g *Backend) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, wt := range quantizedTypes {
		for _, shape := range [][3]int{{256, 32, 333}, {96, 33, 65}, {2816, 100, 333}, {4128, 64, 77}, {4096, 512, 130}, {512, 2, 64}, {512, 17, 64}} {
			cols, T, rows := shape[0], shape[1], shape[2]
			if cols%wt.BlockSize() != 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%dx%dx%d", wt, cols, T, rows), func(t *testing.T) {
				w := quantized(t, wt, cols, rows, r)
				c := opCase{
					weights: map[string]tensor{"w": w},
					inputs:  map[string][]byte{"x": memview.Bytes(randF32(r, cols*T, 2))},
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						y := b.MatMul(wf("w"), b.Input("x", gguf.TypeF32, int64(cols), int64(T)), "y")
						_, decoded := mmqKernels[wt]
						if got, want := useMMQ(y), T >= mmqMinTokens && !mmqDisabled && decoded; got != want {
							t.Fatalf("useMMQ = %v for %d tokens", got, T)
						}
						return y
					},
				}
				compareWithin(t, c, g, 3, quantBound) // eager, captured, replayed
			})
		}
	}
}

// TestMMQChunksTokens: more tokens than the workspace holds at once (the
// activations are quantized and multiplied in chunks).
func TestMMQChunksTokens(t *testing.T) {
	g := gpu(t)
	r := rand.New(rand.NewPCG(23, 24))
	const cols, rows = 11264, 40
	perTok := int64(cols + 2*(cols/16)*4)
	T := int(g.dv.workSize/perTok) + 70
	w := quantized(t, gguf.TypeQ4_K, cols, rows, r)
	compareWithin(t, opCase{
		weights: map[string]tensor{"w": w},
		inputs:  map[string][]byte{"x": memview.Bytes(randF32(r, cols*T, 1))},
		build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
			return b.MatMul(wf("w"), b.Input("x", gguf.TypeF32, cols, int64(T)), "y")
		},
	}, g, 1, quantBound)
}

// TestMMQOverWeightRowsAndSharedInput: tensor-core mat-muls over rows of a
// fused weight (a view at an offset) and back-to-back mat-muls of one
// input, of the three activation formats in turn (q8_0, q8_K, q8_1, then
// q8_K again: the workspace is re-quantized whenever the format changes).
func TestMMQOverWeightRowsAndSharedInput(t *testing.T) {
	g := gpu(t)
	r := rand.New(rand.NewPCG(25, 26))
	const cols, rows, part, T = 512, 64, 96, 80
	ws := map[string]tensor{
		"a": quantized(t, gguf.TypeQ4_0, cols, rows, r), "b": quantized(t, gguf.TypeQ8_0, cols, rows, r),
		"c": quantized(t, gguf.TypeQ4_K, cols, rows, r), "d": quantized(t, gguf.TypeQ4_1, cols, rows, r),
		"qkv": quantized(t, gguf.TypeQ6_K, cols, 3*part, r),
	}
	rb, _ := gguf.TypeQ6_K.RowBytes(cols)
	compareWithin(t, opCase{
		weights: ws,
		inputs:  map[string][]byte{"x": memview.Bytes(randF32(r, cols*T, 1))},
		build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
			x := b.Input("x", gguf.TypeF32, cols, T)
			ya := b.MatMul(wf("a"), x, "ya")
			yb := b.MatMul(wf("b"), x, "yb")
			yc := b.MatMul(wf("c"), x, "yc")
			yd := b.MatMul(wf("d"), x, "yd")
			ye := b.MatMul(b.View(wf("qkv"), "k_rows", part*rb, cols, rows), x, "ye")
			return b.Add(b.Add(b.Add(b.Add(ya, yb, "ab"), yc, "abc"), yd, "abcd"), ye, "abcde")
		},
	}, g, 3, quantBound)
}

// TestMMQGroupsMatMulsOfOneInput: consecutive tensor-core mat-muls of one
// input and weight type run as one launch (q/k/v, gate/up): three Q4_K
// weights of different row counts (tiles of each end part way), a fourth
// that starts the next launch, then two Q6_K and two Q4_0 weights. Each
// product is projected by an F32 weight to a common size and summed. Both
// tile widths.
func TestMMQGroupsMatMulsOfOneInput(t *testing.T) {
	eachTileWidth(t, gpu(t), testMMQGroups)
}

func testMMQGroups(t *testing.T, g *Backend) {
	r := rand.New(rand.NewPCG(27, 28))
	const cols, T, common = 512, 96, 48
	names := []string{"q", "k", "v", "o", "gate", "up", "a", "b"}
	types := []gguf.GGMLType{gguf.TypeQ4_K, gguf.TypeQ4_K, gguf.TypeQ4_K, gguf.TypeQ4_K, gguf.TypeQ6_K, gguf.TypeQ6_K, gguf.TypeQ4_0, gguf.TypeQ4_0}
	rows := []int{200, 72, 65, 130, 333, 333, 64, 100}
	ws := map[string]tensor{}
	for i, name := range names {
		ws[name] = quantized(t, types[i], cols, rows[i], r)
		ws["p"+name] = tensor{gguf.TypeF32, []int64{int64(rows[i]), common}, memview.Bytes(randF32(r, rows[i]*common, 0.1))}
	}
	compareWithin(t, opCase{
		weights: ws,
		inputs:  map[string][]byte{"x": memview.Bytes(randF32(r, cols*T, 1))},
		build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
			x := b.Input("x", gguf.TypeF32, cols, T)
			ys := make([]*graph.Node, len(names))
			for i, name := range names {
				ys[i] = b.MatMul(wf(name), x, "y"+name)
			}
			var sum *graph.Node
			for i, name := range names {
				z := b.MatMul(wf("p"+name), ys[i], "z"+name)
				if sum == nil {
					sum = z
				} else {
					sum = b.Add(sum, z, "s"+name)
				}
			}
			return sum
		},
	}, g, 3, quantBound)
}

// TestMMQKernelChoice: chunks of a tile's worth of tokens or more take the
// wide tiles, shorter ones the 64-token tiles, MINFER_CUDA_MMQ's forms
// (mmqTiles) override the count, and a device whose shared memory the
// pipelined tiles outgrow gets the plain kernels. (No GPU needed.)
func TestMMQKernelChoice(t *testing.T) {
	defer func(was int64) { mmqTiles = was }(mmqTiles)
	h100 := &Backend{dv: &device{smemOptin: 227 << 10}}
	small := &Backend{dv: &device{smemOptin: 48 << 10}}
	for _, c := range []struct {
		b     *Backend
		tiles int64
		nt    int64
		want  string
		bn    int64
	}{
		{h100, 0, 32, "mmqp_q4_k", 64}, {h100, 0, 127, "mmqp_q4_k", 64}, {h100, 0, 128, "mmqw_q4_k", 128}, {h100, 0, 512, "mmqw_q4_k", 128},
		{h100, 64, 512, "mmqp_q4_k", 64}, {h100, 128, 32, "mmqw_q4_k", 128},
		{small, 0, 512, "mmq_q4_k", 64}, {small, 128, 512, "mmq_q4_k", 64},
	} {
		mmqTiles = c.tiles
		fn, smem, bn, threads := c.b.mmqKernel(gguf.TypeQ4_K, c.nt)
		if fn != c.want || bn != c.bn || threads != int(2*bn) || (fn == "mmq_q4_k") != (smem == 0) {
			t.Errorf("smem limit %d, tiles %d, %d tokens: %s (%d bytes, %d tokens, %d threads), want %s of %d tokens",
				c.b.dv.smemOptin, c.tiles, c.nt, fn, smem, bn, threads, c.want, c.bn)
		}
	}
}

// TestChainsFeedMMQ: a batch's swiglu, and its residual add + rms_norm +
// weight mul, write their result straight into the tensor-core mat-mul's
// activation layout (swiglu_mmq_q8 / norm_quant's QT_MMQ_Q8_* for q8_0 and
// q8_1 activations, swiglu_mmq_q8k / QT_MMQ_Q8_K for q8_K), and the
// mat-muls after them (two of one input for the norm, as q/k/v) quantize
// nothing: against the CPU's bits, for rows that fill whole k-steps and
// one that ends in padding (96 of 128), token counts at the threshold and
// past a tile, eager, captured and replayed. With the quant fusions
// switched off (MINFER_CUDA_DECODE=quant) mmq_act_* run instead. The
// swiglu product, the residual sum and the norm are in the output, so a
// fused kernel that did not write them fails.
func TestChainsFeedMMQ(t *testing.T) {
	g := oneBackend(t)
	r := rand.New(rand.NewPCG(61, 62))
	cases := []struct {
		wt         gguf.GGMLType
		n, T, rows int
		acts       string
	}{
		{gguf.TypeQ4_0, 512, 32, 96, "mmq_act_q8"},
		{gguf.TypeQ4_0, 96, 100, 64, "mmq_act_q8"},
		{gguf.TypeQ4_1, 1024, 77, 130, "mmq_act_q8"},
		{gguf.TypeQ8_0, 512, 129, 64, "mmq_act_q8"},
		{gguf.TypeQ4_K, 1024, 32, 96, "mmq_act_q8k"},
		{gguf.TypeQ4_K, 2816, 200, 64, "mmq_act_q8k"},
		{gguf.TypeQ6_K, 512, 65, 130, "mmq_act_q8k"},
	}
	for _, off := range []bool{false, true} {
		for _, c := range cases {
			name := fmt.Sprintf("%s/n%d/T%d/rows%d/quantoff%v", c.wt, c.n, c.T, c.rows, off)
			n, T := int64(c.n), int64(c.T)
			k := int64(min(c.n, c.rows))
			ws := map[string]tensor{"w1": quantized(t, c.wt, c.n, c.rows, r), "w2": quantized(t, c.wt, c.n, c.rows, r),
				"norm": {gguf.TypeF32, []int64{n}, memview.Bytes(randF32(r, c.n, 1))}}
			in := func(names ...string) map[string][]byte {
				m := map[string][]byte{}
				for _, s := range names {
					m[s] = memview.Bytes(randF32(r, c.n*c.T, 3))
				}
				return m
			}
			// run compares the case and reports the launches of fused and
			// of the mat-mul's own activation kernel it made.
			run := func(t *testing.T, oc opCase, fused string) {
				defer func(o decodeOff) { g.off = o }(g.off)
				if off {
					g.off = parseDecodeOff(defaultDecodeOff + ",quant")
				}
				f0, a0 := g.l.counts[fused], g.l.counts[c.acts]
				compareExact(t, oc, g, 3)
				f, a := g.l.counts[fused]-f0, g.l.counts[c.acts]-a0
				if (a > 0) != off || fused != "norm_quant" && (f > 0) == off {
					t.Errorf("quant fusions off %v: %d %s and %d %s launches: %v", off, f, fused, a, c.acts, g.l.counts)
				}
			}
			t.Run("swiglu/"+name, func(t *testing.T) {
				fused := "swiglu_mmq_q8"
				if c.acts == "mmq_act_q8k" {
					fused = "swiglu_mmq_q8k"
				}
				run(t, opCase{weights: map[string]tensor{"w": ws["w1"]}, inputs: in("g", "u"),
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						s := b.SwiGLU(b.Input("g", gguf.TypeF32, n, T), b.Input("u", gguf.TypeF32, n, T), "s")
						y := b.MatMul(wf("w"), s, "y")
						return b.Add(b.View(y, "yk", 0, k, T), b.View(s, "sk", 0, k, T), "out")
					}}, fused)
			})
			t.Run("norm/"+name, func(t *testing.T) {
				run(t, opCase{weights: ws, inputs: in("x", "res"),
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						sum := b.Add(b.Input("x", gguf.TypeF32, n, T), b.Input("res", gguf.TypeF32, n, T), "sum")
						m := b.Mul(b.RMSNorm(sum, 1e-5, "nrm"), wf("norm"), "m")
						y1 := b.MatMul(wf("w1"), m, "y1")
						y2 := b.MatMul(wf("w2"), m, "y2")
						y := b.Add(b.View(y1, "y1k", 0, k, T), b.View(y2, "y2k", 0, k, T), "y")
						return b.Add(b.Add(y, b.View(sum, "sk", 0, k, T), "ys"), b.View(m, "mk", 0, k, T), "out")
					}}, "norm_quant")
			})
		}
	}
}
