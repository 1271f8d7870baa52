package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/core/backend/cpu"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/memview"
)

func TestCallErrorsMatchSentinels(t *testing.T) {
	err := fmt.Errorf("loading: %w", &CallError{Call: "cuMemAlloc", Result: ErrOutOfMemory})
	if !errors.Is(err, ErrOutOfMemory) || errors.Is(err, ErrInvalidValue) {
		t.Errorf("%v", err)
	}
	if !strings.Contains(err.Error(), "CUDA_ERROR_OUT_OF_MEMORY") {
		t.Errorf("message %q", err)
	}
}

// gpu opens the backend or skips the test with one line.
func gpu(t *testing.T) *Backend {
	t.Helper()
	if _, err := loadDriver(); err != nil {
		t.Skipf("no CUDA driver: %v", err)
	}
	b, err := Open(Options{})
	if err != nil {
		t.Fatalf("CUDA driver present but the backend does not open: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

// newVariants names what the "new" run of mvVariants must launch.
type newVariants struct{ staged, one bool }

// mvVariants runs run once per kernel family, each on a backend of its
// own: "new" (the defaults: the staged mvs_* mat-vecs, with the norm
// before them where it fuses, the one-block attention attn_x_one_*) and
// "v1" (MINFER_CUDA_MV=v1 and MINFER_CUDA_DECODE=one: the mvf_*
// mat-vecs, norm_quant, the split attention).
// Afterwards it requires that the new run launched the kernels want
// names (where the shapes allow them) and the v1 run none of them, so
// neither passes by running the other's kernels; it logs the counts.
func mvVariants(t *testing.T, want newVariants, run func(t *testing.T, g *Backend, v1 bool)) {
	t.Helper()
	for _, v1 := range []bool{false, true} {
		name := "new"
		if v1 {
			name = "v1"
		}
		t.Run(name, func(t *testing.T) {
			g := gpu(t)
			// Both families set every switch they compare, whatever the
			// default list (defaultDecodeOff) keeps off.
			g.mvV1, g.off.attnOne = v1, v1
			g.l.counts = map[string]int{}
			run(t, g, v1)
			staged, one := 0, 0
			for fn, n := range g.l.counts {
				if strings.HasPrefix(fn, "mvs_") || strings.HasPrefix(fn, "mvp_") || strings.HasPrefix(fn, "mvk_") {
					staged += n
				}
				if strings.HasPrefix(fn, "attn_x_one_") {
					one += n
				}
			}
			t.Logf("%d launches of staged mat-vecs, %d of one-block attention", staged, one)
			if v1 && staged+one > 0 {
				t.Errorf("the v1 run launched %d staged mat-vecs and %d one-block attentions", staged, one)
			}
			if !v1 && !t.Failed() && !t.Skipped() && (want.staged && staged == 0 || want.one && one == 0) {
				t.Errorf("the new kernels did not run (want %+v): %v", want, g.l.counts)
			}
		})
	}
}

// opCase is one small graph: the builder makes it, the inputs fill it.
type opCase struct {
	name    string
	build   func(b *graph.Builder, w func(name string) *graph.Node) *graph.Node
	weights map[string]tensor
	inputs  map[string][]byte
	kv      map[string]int64 // persistent regions: bytes
	// kvInit: the persistent regions' bytes written by the host before
	// the first step (the rest of a region, and regions not named, zero).
	kvInit map[string][]byte
	// bound is the NMSE the GPU's outputs may have against the CPU's:
	// floatBound when zero, quantBound where quantized weights take part.
	bound float64
}

// kvFill is the attention tests' cache set-up: caches "k" and "v" of type
// t and ctx rows of rowLen, every row written first (stores "kfill" and
// "vfill") from the inputs "kall" and "vall" through "allrows".
type kvFill struct {
	t           gguf.GGMLType
	rowLen, ctx int64
}

// sizes is the caches' bytes, for opCase.kv.
func (f kvFill) sizes() map[string]int64 {
	rb, _ := f.t.RowBytes(f.rowLen)
	return map[string]int64{"k": rb * f.ctx, "v": rb * f.ctx}
}

// inputs adds the fill's inputs to in and returns it: k and v, ctx rows
// of rowLen each, and the rows 0..ctx-1.
func (f kvFill) inputs(in map[string][]byte, k, v []float32) map[string][]byte {
	rows := make([]int32, f.ctx)
	for i := range rows {
		rows[i] = int32(i)
	}
	in["kall"], in["vall"], in["allrows"] = memview.Bytes(k), memview.Bytes(v), memview.Bytes(rows)
	return in
}

// caches adds the two caches to b, filled.
func (f kvFill) caches(b *graph.Builder) (kc, vc *graph.Node) {
	kc = b.KV("k", f.t, f.rowLen, f.ctx)
	vc = b.KV("v", f.t, f.rowLen, f.ctx)
	all := b.Input("allrows", gguf.TypeI32, f.ctx)
	kc = b.StoreKV(kc, b.Input("kall", gguf.TypeF32, f.rowLen, f.ctx), all, "kfill")
	vc = b.StoreKV(vc, b.Input("vall", gguf.TypeF32, f.rowLen, f.ctx), all, "vfill")
	return kc, vc
}

// The op tests' bounds against the CPU backend (issue 11): the GPU's
// float sums run in another order than the CPU's (integer block sums and
// activation quantization stay exact).
const (
	floatBound = 1e-7
	quantBound = 1e-5
)

// boundFor is the bound of an op over weights of type wt.
func boundFor(wt gguf.GGMLType) float64 {
	switch wt {
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16:
		return floatBound
	}
	return quantBound
}

type tensor struct {
	t    gguf.GGMLType
	dims []int64
	data []byte
}

// caseSeq makes weight names unique per run: one backend serves many cases.
var caseSeq int

// runCase runs c on be alone and returns the output.
func runCase(t *testing.T, be backend.Backend, c opCase, steps int) []float32 {
	t.Helper()
	caseSeq++
	uniq := func(name string) string { return fmt.Sprintf("%s#%d", name, caseSeq) }
	b := graph.NewBuilder(graph.Params{Tokens: 1})
	out := c.build(b, func(name string) *graph.Node {
		w := c.weights[name]
		return b.Weight(uniq(name), w.t, w.dims)
	})
	g, err := b.Finish(out)
	if err != nil {
		t.Fatal(err)
	}
	where := whereAll{}
	if err := graph.AssignBackends(g, []graph.Capability{be}, nil, where); err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		if !n.Op.IsLeaf() && n.Op != graph.OpView && !be.SupportsNode(n) {
			t.Fatalf("%s does not support %s", be.Name(), n)
		}
	}
	for name, w := range c.weights {
		if err := be.RegisterWeight(uniq(name), w.t, w.dims, w.data); err != nil {
			t.Fatal(err)
		}
	}
	ga := alloc.NewGraphAllocator()
	ga.AddBackend(be, alloc.Unlimited("test"))
	defer ga.Close()
	kv := map[string]alloc.BufRef{}
	for name, n := range c.kv {
		ref, err := ga.AllocPersistent(0, n, name)
		if err != nil {
			t.Fatal(err)
		}
		kv[name] = ref
	}
	defer func() {
		for _, ref := range kv {
			ga.FreePersistent(ref)
		}
	}()
	for name, data := range c.kvInit {
		ref, ok := kv[name]
		if !ok || int64(len(data)) > c.kv[name] {
			t.Fatalf("kvInit %q: %d bytes for a region of %d", name, len(data), c.kv[name])
		}
		w := ref
		w.Len = int64(len(data))
		if err := be.WriteHostWindow(w, data); err != nil {
			t.Fatal(err)
		}
	}
	var res []float32
	for step := 0; step < steps; step++ {
		if err := graph.Allocate(g, ga, func(name string) (alloc.BufRef, bool) { r, ok := kv[name]; return r, ok }); err != nil {
			t.Fatal(err)
		}
		for name, data := range c.inputs {
			n, ok := g.Input(name)
			if !ok || n == nil {
				t.Fatalf("input %q is not in the graph", name)
			}
			if err := be.WriteHostWindow(n.Buf, data); err != nil {
				t.Fatal(err)
			}
		}
		if err := backend.Execute(context.Background(), g, []backend.Backend{be}); err != nil {
			t.Fatal(err)
		}
		res = make([]float32, out.Buf.Len/4)
		if err := be.ReadHostWindow(out.Buf, memview.Bytes(res)); err != nil {
			t.Fatal(err)
		}
		graph.Release(g, ga)
	}
	return res
}

type whereAll struct{}

func (whereAll) WeightBackend(string) (int, bool) { return 0, true }

func nmse(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if den == 0 {
		return num
	}
	return num / den
}

func randF32(r *rand.Rand, n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = (r.Float32()*2 - 1) * scale
	}
	return v
}

func quantized(t *testing.T, wt gguf.GGMLType, cols, rows int, r *rand.Rand) tensor {
	t.Helper()
	src := randF32(r, cols*rows, 1)
	rb, err := wt.RowBytes(int64(cols))
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, int(rb)*rows)
	if err := quant.QuantizeWeights(wt, src, data); err != nil {
		t.Fatal(err)
	}
	return tensor{wt, []int64{int64(cols), int64(rows)}, data}
}

var weightTypes = []gguf.GGMLType{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ4_1,
	gguf.TypeQ5_0, gguf.TypeQ5_1, gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K}

// compare runs c on the CPU backend and on the GPU (steps times: eager,
// then captured and replayed graphs) and requires the GPU's outputs to be
// finite and within c's NMSE bound of the CPU's; it logs how many differ
// from the CPU's bits, the largest difference and the NMSE.
func compare(t *testing.T, c opCase, gpuB *Backend, steps int) {
	t.Helper()
	host := cpu.New(2)
	defer host.Close()
	want := runCase(t, host, c, 1)
	got := runCase(t, gpuB, c, steps)
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got), len(want))
	}
	for i, v := range got {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("output %d is %v", i, v)
		}
	}
	diffs, worst, maxDiff := 0, -1, 0.0
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			diffs++
			if d := math.Abs(float64(got[i]) - float64(want[i])); d > maxDiff || worst < 0 {
				worst, maxDiff = i, d
			}
		}
	}
	bound := c.bound
	if bound == 0 {
		bound = floatBound
	}
	e := nmse(got, want)
	t.Logf("%d outputs, %d differ from the CPU's bits, max |diff| %.3g, NMSE %.3g (bound %.0e)", len(want), diffs, maxDiff, e, bound)
	if !(e <= bound) { // (a NaN NMSE fails too)
		t.Errorf("NMSE %.3g > %.0e against the CPU (%d of %d outputs differ; largest at %d: %v, want %v)", e, bound, diffs, len(want), worst, got[worst], want[worst])
	}
}

// TestMatMulEveryWeightType: the mat-vec (one token), the batched kernel
// (odd token counts, more than one grid row of eight) against the CPU's
// vec-dot, for every weight type, odd row counts, rows that end in a
// partial chunk of blocks (2816 = 11 K-blocks, 88 small blocks), rows of
// several passes (11264 = 44 K-blocks, 352 small blocks), float
// rows with a tail (520: not a multiple of 32 or 16).
func TestMatMulEveryWeightType(t *testing.T) {
	mvVariants(t, newVariants{staged: true}, func(t *testing.T, g *Backend, v1 bool) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, wt := range weightTypes {
			if _, fast := fastMatVec[wt]; v1 && !fast {
				continue // the same kernels as in the staged run
			}
			for _, shape := range [][2]int{{512, 1}, {512, 3}, {512, 17}, {2816, 1}, {2816, 9}, {520, 1}, {520, 5}, {11264, 1}, {11264, 3}, {2048, 1}, {2048, 5}} {
				cols, T, rows := shape[0], shape[1], 333
				if cols%wt.BlockSize() != 0 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%dx%d", wt, cols, T), func(t *testing.T) {
					w := quantized(t, wt, cols, rows, r)
					c := opCase{
						weights: map[string]tensor{"w": w},
						inputs:  map[string][]byte{"x": memview.Bytes(randF32(r, cols*T, 2))},
						build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
							return b.MatMul(wf("w"), b.Input("x", gguf.TypeF32, int64(cols), int64(T)), "y")
						},
						bound: boundFor(wt),
					}
					compare(t, c, g, 3) // three steps: eager, captured, replayed
				})
			}
		}
	})
}

// TestGetRowsEveryWeightType: embedding rows dequantized on the device.
func TestGetRowsEveryWeightType(t *testing.T) {
	g := gpu(t)
	r := rand.New(rand.NewPCG(3, 4))
	for _, wt := range weightTypes {
		t.Run(wt.String(), func(t *testing.T) {
			w := quantized(t, wt, 256, 37, r)
			ids := []int32{0, 36, 5, 5, 17}
			compare(t, opCase{
				weights: map[string]tensor{"emb": w},
				inputs:  map[string][]byte{"ids": memview.Bytes(ids)},
				build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
					return b.GetRows(wf("emb"), b.Input("ids", gguf.TypeI32, int64(len(ids))), "rows")
				},
			}, g, 1)
		})
	}
}

// TestFloatOps: rms_norm (alone, and fused with the mul that follows),
// add and mul (broadcast and full), swiglu; odd row lengths and one token.
func TestFloatOps(t *testing.T) {
	g := gpu(t)
	r := rand.New(rand.NewPCG(5, 6))
	for _, shape := range [][2]int{{4096, 1}, {257, 7}, {64, 3}} {
		n, T := shape[0], shape[1]
		x := memview.Bytes(randF32(r, n*T, 3))
		y := memview.Bytes(randF32(r, n*T, 3))
		norm := tensor{gguf.TypeF32, []int64{int64(n)}, memview.Bytes(randF32(r, n, 1))}
		cases := map[string]func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node{
			"rms_norm": func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
				return b.RMSNorm(b.Input("x", gguf.TypeF32, int64(n), int64(T)), 1e-5, "n")
			},
			"rms_norm_mul": func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
				return b.Mul(b.RMSNorm(b.Input("x", gguf.TypeF32, int64(n), int64(T)), 1e-6, "n"), wf("norm"), "m")
			},
			"add_broadcast": func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
				return b.Add(b.Input("x", gguf.TypeF32, int64(n), int64(T)), wf("norm"), "a")
			},
			"mul_full": func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
				return b.Mul(b.Input("x", gguf.TypeF32, int64(n), int64(T)), b.Input("y", gguf.TypeF32, int64(n), int64(T)), "m")
			},
			"add_full": func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
				return b.Add(b.Input("x", gguf.TypeF32, int64(n), int64(T)), b.Input("y", gguf.TypeF32, int64(n), int64(T)), "a")
			},
			"swiglu": func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
				return b.SwiGLU(b.Input("x", gguf.TypeF32, int64(n), int64(T)), b.Input("y", gguf.TypeF32, int64(n), int64(T)), "s")
			},
			"scale": func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
				return b.Scale(b.Input("x", gguf.TypeF32, int64(n), int64(T)), 0.0883883, "s")
			},
			"softcap": func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
				return b.SoftCap(b.Input("x", gguf.TypeF32, int64(n), int64(T)), 1.7, "s")
			},
			"gelu": func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
				return b.GELU(b.Input("x", gguf.TypeF32, int64(n), int64(T)), "s")
			},
			"sigmoid": func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
				return b.Sigmoid(b.Input("x", gguf.TypeF32, int64(n), int64(T)), "s")
			},
			"softmax": func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
				return b.SoftMax(b.Input("x", gguf.TypeF32, int64(n), int64(T)), "s")
			},
		}
		for name, build := range cases {
			t.Run(fmt.Sprintf("%s/%dx%d", name, n, T), func(t *testing.T) {
				inputs := map[string][]byte{"x": x}
				if strings.HasSuffix(name, "full") || name == "swiglu" {
					inputs["y"] = y
				}
				compare(t, opCase{weights: map[string]tensor{"norm": norm}, inputs: inputs, build: build}, g, 2)
			})
		}
	}
}

// TestRope: normal and NeoX pairs, partial rotation, frequency factors and
// a frequency scale, positions far from zero.
func TestRope(t *testing.T) {
	g := gpu(t)
	r := rand.New(rand.NewPCG(7, 8))
	hd, heads, T := 64, 4, 5
	for _, p := range []graph.RopeParams{
		{Dims: 64, Mode: graph.RopeNormal, FreqBase: 10000, FreqScale: 1},
		{Dims: 64, Mode: graph.RopeNeoX, FreqBase: 1e6, FreqScale: 1},
		{Dims: 32, Mode: graph.RopeNormal, FreqBase: 500000, FreqScale: 0.25},
		{Dims: 48, Mode: graph.RopeNeoX, FreqBase: 10000, FreqScale: 0.5},
	} {
		for _, withFreqs := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/dims%d/freqs%v", p.Mode, p.Dims, withFreqs), func(t *testing.T) {
				pos := []int32{0, 1, 17, 255, 4095}
				freqs := make([]float32, p.Dims/2)
				for i := range freqs {
					freqs[i] = 1 + r.Float32()*8
				}
				compare(t, opCase{
					weights: map[string]tensor{"freqs": {gguf.TypeF32, []int64{int64(p.Dims / 2)}, memview.Bytes(freqs)}},
					inputs:  map[string][]byte{"x": memview.Bytes(randF32(r, hd*heads*T, 2)), "pos": memview.Bytes(pos)},
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						var f *graph.Node
						if withFreqs {
							f = wf("freqs")
						}
						return b.Rope(b.Input("x", gguf.TypeF32, int64(hd), int64(heads), int64(T)), b.Input("pos", gguf.TypeI32, int64(T)), f, p, "r")
					},
				}, g, 2)
			})
		}
	}
}

// TestStoreKVAndAttention: new rows stored into an F16 or F32 cache that
// already holds earlier positions, then GQA attention over it with a
// causal mask; one token and a batch; a span at the 256 class boundary.
func TestStoreKVAndAttention(t *testing.T) {
	mvVariants(t, newVariants{one: true}, func(t *testing.T, g *Backend, _ bool) {
		r := rand.New(rand.NewPCG(9, 10))
		heads, kvHeads, ctx := 8, 2, 512
		for _, kvt := range []gguf.GGMLType{gguf.TypeF16, gguf.TypeF32} {
			for _, tc := range []struct {
				hd, past, T, kvLen int
				softCap            float32
			}{{64, 0, 1, 256, 0}, {64, 200, 7, 256, 0}, {64, 255, 1, 256, 0}, {64, 256, 1, 512, 0}, {64, 0, 33, 256, 0},
				{128, 100, 1, 300, 0}, {128, 290, 3, 300, 50}, {64, 63, 2, 256, 30}, {96, 400, 1, 512, 0},
				{128, 299, 1, 300, 50}, {256, 130, 1, 256, 0}, {64, 5, 1, 32, 0}} {
				hd := tc.hd
				t.Run(fmt.Sprintf("%s/hd%d/past%d/T%d/kv%d/cap%g", kvt, hd, tc.past, tc.T, tc.kvLen, tc.softCap), func(t *testing.T) {
					rowLen := hd * kvHeads
					fill := kvFill{kvt, int64(rowLen), int64(ctx)}
					// The cache's earlier rows come from the weights table: the
					// test stores them first with a separate step on both sides.
					prevK := randF32(r, rowLen*ctx, 1)
					prevV := randF32(r, rowLen*ctx, 1)
					rows := make([]int32, tc.T)
					for i := range rows {
						rows[i] = int32(tc.past + i)
					}
					mask := make([]float32, tc.kvLen*tc.T)
					for i := 0; i < tc.T; i++ {
						for j := range tc.kvLen {
							if j > tc.past+i {
								mask[i*tc.kvLen+j] = float32(math.Inf(-1))
							}
						}
					}
					c := opCase{
						kv: fill.sizes(),
						inputs: fill.inputs(map[string][]byte{
							"q": memview.Bytes(randF32(r, hd*heads*tc.T, 1)), "knew": memview.Bytes(randF32(r, rowLen*tc.T, 1)),
							"vnew": memview.Bytes(randF32(r, rowLen*tc.T, 1)), "rows": memview.Bytes(rows), "mask": memview.Bytes(mask),
						}, prevK, prevV),
						build: func(b *graph.Builder, _ func(string) *graph.Node) *graph.Node {
							kc, vc := fill.caches(b)
							rowsN := b.Input("rows", gguf.TypeI32, int64(tc.T))
							kc = b.StoreKV(kc, b.Input("knew", gguf.TypeF32, int64(rowLen), int64(tc.T)), rowsN, "kstore")
							vc = b.StoreKV(vc, b.Input("vnew", gguf.TypeF32, int64(rowLen), int64(tc.T)), rowsN, "vstore")
							q := b.Input("q", gguf.TypeF32, int64(hd), int64(heads), int64(tc.T))
							m := b.Input("mask", gguf.TypeF32, int64(tc.kvLen), int64(tc.T))
							return b.Attention(q, kc, vc, m, graph.AttentionParams{Scale: 0.125, KVHeads: kvHeads, KVLen: tc.kvLen, SoftCap: tc.softCap}, "att")
						},
					}
					if kvt == gguf.TypeF16 && tc.T > 1 && !fattnDisabled {
						compareWithin(t, c, g, 2, floatBound) // flash attention (fattn_test.go)
						return
					}
					compare(t, c, g, 2)
				})
			}
		}
	})
}

// TestBuffersAndWindows: the length contract on the device: windowed
// writes and reads of exactly Len bytes, exact-length whole writes, views.
func TestBuffersAndWindows(t *testing.T) {
	g := gpu(t)
	ga := alloc.NewGraphAllocator()
	ga.AddBackend(g, alloc.Unlimited("test"))
	defer ga.Close()
	ref, err := ga.AllocInPool(0, 3000)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := g.WriteHostWindow(ref, data); err != nil {
		t.Fatal(err)
	}
	if err := g.WriteHostWindow(ref, make([]byte, 4096)); err == nil {
		t.Error("a class-sized write into a 3000-byte window was accepted")
	}
	back := make([]byte, 3000)
	if err := g.ReadHostWindow(ref, back); err != nil || string(back) != string(data) {
		t.Fatalf("read back: %v", err)
	}
	view := ref
	view.Off, view.Len = 1000, 10
	win := make([]byte, 10)
	if err := g.ReadHostWindow(view, win); err != nil || string(win) != string(data[1000:1010]) {
		t.Errorf("view read %v", err)
	}
	view.Off = 4090
	if err := g.ReadHostWindow(view, win); err == nil {
		t.Error("a window past the buffer was read")
	}
	kv, err := ga.AllocPersistent(0, 512, "kv")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.WriteHost(kv.ID, make([]byte, 511)); err == nil {
		t.Error("an inexact write into a persistent region was accepted")
	}
	if n, what := g.OverheadBytes(); n <= 0 || what == "" {
		t.Errorf("overhead %d %q: the setup took device memory", n, what)
	}
	t.Logf("%s; overhead %d MiB (%s)", g.Describe(), g.overhead>>20, g.ohWhat)
}

// TestMoEOps: the mixture-of-experts chain of the llama-MoE and qwen2moe
// graphs on the device — softmax of router logits, top-k (with ties),
// the picked weights (renormalised or not), the experts' mat-vecs (x shared
// by the slots, or one row per slot) and the weighted sum — plus the
// per-row scalar mul of the shared-expert gate; every weight type.
func TestMoEOps(t *testing.T) {
	g := gpu(t)
	r := rand.New(rand.NewPCG(11, 12))
	const nExp, k, cols, rows = 8, 2, 512, 40
	for _, wt := range weightTypes {
		for _, T := range []int{1, 5} {
			for _, perSlot := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/T%d/perSlot%v", wt, T, perSlot), func(t *testing.T) {
					experts := quantized(t, wt, cols, rows*nExp, r)
					experts.dims = []int64{cols, rows, nExp}
					logits := randF32(r, nExp*T, 2)
					logits[3] = logits[5] // a tie for the exchange sort
					nx := T
					if perSlot {
						nx = T * k
					}
					compare(t, opCase{
						weights: map[string]tensor{"exps": experts},
						inputs: map[string][]byte{"logits": memview.Bytes(logits), "x": memview.Bytes(randF32(r, cols*nx, 1)),
							"gate": memview.Bytes(randF32(r, T, 1))},
						build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
							probs := b.SoftMax(b.Input("logits", gguf.TypeF32, nExp, int64(T)), "probs")
							ids := b.TopK(probs, k, "ids")
							wts := b.MoEWeights(probs, ids, perSlot, "wts")
							var x *graph.Node
							if perSlot {
								x = b.Input("x", gguf.TypeF32, cols, k, int64(T))
							} else {
								x = b.Input("x", gguf.TypeF32, cols, int64(T), 1)
							}
							y := b.MatMulID(wf("exps"), x, ids, "y")
							sum := b.WeightedSum(y, wts, "sum")
							return b.Mul(sum, b.Input("gate", gguf.TypeF32, 1, int64(T)), "gated")
						},
						bound: boundFor(wt),
					}, g, 2)
				})
			}
		}
	}
}

// TestMatMulOverWeightRows: a mat-mul reading rows of a fused weight in
// place (phi3's attn_qkv, the device's fused forms): a view of the
// registered weight, at an offset.
func TestMatMulOverWeightRows(t *testing.T) {
	mvVariants(t, newVariants{staged: true}, func(t *testing.T, g *Backend, _ bool) {
		r := rand.New(rand.NewPCG(13, 14))
		for _, wt := range []gguf.GGMLType{gguf.TypeF16, gguf.TypeQ8_0, gguf.TypeQ4_K} {
			t.Run(wt.String(), func(t *testing.T) {
				const cols, part = 512, 96
				w := quantized(t, wt, cols, 3*part, r)
				rb, _ := wt.RowBytes(cols)
				compare(t, opCase{
					weights: map[string]tensor{"qkv": w},
					inputs:  map[string][]byte{"x": memview.Bytes(randF32(r, cols*3, 1))},
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						k := b.View(wf("qkv"), "k_rows", part*rb, cols, part)
						return b.MatMul(k, b.Input("x", gguf.TypeF32, cols, 3), "k")
					},
					bound: boundFor(wt),
				}, g, 2)
			})
		}
	})
}

// TestMatMulsOfOneInputShareItsQuantization: back-to-back mat-muls of one
// input (q/k/v, gate/up) quantize it once; a weight of another vec-dot type
// in between re-quantizes. The sum of the products must still match the
// CPU's, eager and replayed.
func TestMatMulsOfOneInputShareItsQuantization(t *testing.T) {
	mvVariants(t, newVariants{staged: true}, func(t *testing.T, g *Backend, _ bool) {
		r := rand.New(rand.NewPCG(15, 16))
		const cols, rows = 512, 64
		for _, T := range []int{1, 4} {
			t.Run(fmt.Sprintf("T%d", T), func(t *testing.T) {
				ws := map[string]tensor{
					"a": quantized(t, gguf.TypeQ4_0, cols, rows, r), "b": quantized(t, gguf.TypeQ8_0, cols, rows, r),
					"c": quantized(t, gguf.TypeQ4_K, cols, rows, r), "d": quantized(t, gguf.TypeQ5_0, cols, rows, r),
				}
				compare(t, opCase{
					weights: ws,
					inputs:  map[string][]byte{"x": memview.Bytes(randF32(r, cols*T, 1))},
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						x := b.Input("x", gguf.TypeF32, cols, int64(T))
						ya := b.MatMul(wf("a"), x, "ya")
						yb := b.MatMul(wf("b"), x, "yb")
						yc := b.MatMul(wf("c"), x, "yc")
						yd := b.MatMul(wf("d"), x, "yd")
						return b.Add(b.Add(b.Add(ya, yb, "ab"), yc, "abc"), yd, "abcd")
					},
					bound: quantBound,
				}, g, 3)
			})
		}
	})
}

// TestDecodeChains: the decode block's fused kernels against the CPU's
// node-by-node results: residual add + rms_norm + weight mul + the
// activation quantization of the two mat-muls after it (q8_0, q8_1, q8_K
// weight types), and swiglu + quantization + mat-mul; one token and a
// small batch, eager, captured and replayed. The residual sum and the
// swiglu product are part of the output, so a fused kernel that skipped
// writing them fails.
func TestDecodeChains(t *testing.T) {
	mvVariants(t, newVariants{staged: true}, func(t *testing.T, g *Backend, _ bool) {
		r := rand.New(rand.NewPCG(17, 18))
		for _, wt := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ5_1, gguf.TypeQ4_K, gguf.TypeQ6_K} {
			for _, n := range []int{512, 2048} {
				for _, T := range []int{1, 3} {
					t.Run(fmt.Sprintf("%s/n%d/T%d", wt, n, T), func(t *testing.T) {
						ws := map[string]tensor{
							"w1": quantized(t, wt, n, n, r), "w2": quantized(t, wt, n, n, r),
							"norm": {gguf.TypeF32, []int64{int64(n)}, memview.Bytes(randF32(r, n, 1))},
						}
						normIn := map[string][]byte{"x": memview.Bytes(randF32(r, n*T, 2)), "res": memview.Bytes(randF32(r, n*T, 2))}
						swiIn := map[string][]byte{"g": memview.Bytes(randF32(r, n*T, 3)), "u": memview.Bytes(randF32(r, n*T, 3))}
						t.Run("norm", func(t *testing.T) {
							compare(t, opCase{weights: ws, inputs: normIn, bound: quantBound,
								build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
									sum := b.Add(b.Input("x", gguf.TypeF32, int64(n), int64(T)), b.Input("res", gguf.TypeF32, int64(n), int64(T)), "sum")
									m := b.Mul(b.RMSNorm(sum, 1e-5, "nrm"), wf("norm"), "m")
									y1 := b.MatMul(wf("w1"), m, "y1")
									y2 := b.MatMul(wf("w2"), m, "y2")
									return b.Add(b.Add(y1, y2, "y12"), sum, "out")
								}}, g, 3)
						})
						t.Run("swiglu", func(t *testing.T) {
							compare(t, opCase{weights: map[string]tensor{"w1": ws["w1"]}, inputs: swiIn, bound: quantBound,
								build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
									s := b.SwiGLU(b.Input("g", gguf.TypeF32, int64(n), int64(T)), b.Input("u", gguf.TypeF32, int64(n), int64(T)), "s")
									return b.Add(b.MatMul(wf("w1"), s, "y"), s, "out")
								}}, g, 3)
						})
					})
				}
			}
		}
	})
}

// TestRopePair: the q and k ropes of a block (different head counts, the
// same positions) as the one fused launch, against the CPU.
func TestRopePair(t *testing.T) {
	g := gpu(t)
	r := rand.New(rand.NewPCG(19, 20))
	const hd, heads, kvHeads = 128, 8, 2
	for _, T := range []int{1, 4} {
		for _, p := range []graph.RopeParams{
			{Dims: 128, Mode: graph.RopeNormal, FreqBase: 10000, FreqScale: 1},
			{Dims: 64, Mode: graph.RopeNeoX, FreqBase: 1e6, FreqScale: 0.5},
		} {
			t.Run(fmt.Sprintf("%s/dims%d/T%d", p.Mode, p.Dims, T), func(t *testing.T) {
				pos := make([]int32, T)
				for i := range pos {
					pos[i] = int32(300 + 7*i)
				}
				compare(t, opCase{
					inputs: map[string][]byte{"q": memview.Bytes(randF32(r, hd*heads*T, 2)), "k": memview.Bytes(randF32(r, hd*kvHeads*T, 2)),
						"pos": memview.Bytes(pos)},
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						ps := b.Input("pos", gguf.TypeI32, int64(T))
						q := b.Rope(b.Input("q", gguf.TypeF32, hd, heads, int64(T)), ps, nil, p, "rq")
						k := b.Rope(b.Input("k", gguf.TypeF32, hd, kvHeads, int64(T)), ps, nil, p, "rk")
						// Both in the output: all of k (one row) added to each
						// of q's rows of the same length.
						kn := int64(hd * kvHeads * T)
						return b.Add(b.View(q, "qv", 0, kn, heads/kvHeads), b.View(k, "kv", 0, kn, 1), "qk")
					},
				}, g, 2)
			})
		}
	}
}

// TestDecodeAttentionFeedsMatMul: one token's split attention whose last
// blocks also quantize the output row for the mat-mul after it (q8_0 for
// Q4_0, q8_1 for Q5_1; Q4_K takes q8_K, quantized apart), against the CPU.
func TestDecodeAttentionFeedsMatMul(t *testing.T) {
	mvVariants(t, newVariants{staged: true, one: true}, func(t *testing.T, g *Backend, _ bool) {
		r := rand.New(rand.NewPCG(21, 22))
		const hd, heads, kvHeads, ctx, past = 128, 8, 2, 256, 150
		rowLen := hd * kvHeads
		for _, wt := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ5_1, gguf.TypeQ4_K} {
			t.Run(wt.String(), func(t *testing.T) {
				fill := kvFill{gguf.TypeF16, int64(rowLen), ctx}
				mask := make([]float32, ctx)
				for j := past + 1; j < ctx; j++ {
					mask[j] = float32(math.Inf(-1))
				}
				compare(t, opCase{
					kv:      fill.sizes(),
					weights: map[string]tensor{"wo": quantized(t, wt, hd*heads, 96, r)},
					inputs: fill.inputs(map[string][]byte{"q": memview.Bytes(randF32(r, hd*heads, 1)), "mask": memview.Bytes(mask)},
						randF32(r, rowLen*ctx, 1), randF32(r, rowLen*ctx, 1)),
					bound: quantBound,
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						kc, vc := fill.caches(b)
						q := b.Input("q", gguf.TypeF32, hd, heads, 1)
						att := b.Attention(q, kc, vc, b.Input("mask", gguf.TypeF32, ctx, 1), graph.AttentionParams{Scale: 0.088, KVHeads: kvHeads, KVLen: ctx}, "att")
						return b.MatMul(wf("wo"), att, "o")
					},
				}, g, 3)
			})
		}
	})
}

// TestMultiMatVec: three one-token mat-muls of one input with weights of
// one type (q, k, v) as one launch whose rows run through the three
// weights (37 rows each: the boundaries fall inside a block of four rows),
// and two (gate, up), against the CPU.
func TestMultiMatVec(t *testing.T) {
	mvVariants(t, newVariants{staged: true}, func(t *testing.T, g *Backend, _ bool) {
		r := rand.New(rand.NewPCG(23, 24))
		const cols, rows = 512, 37
		for _, wt := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
			for _, k := range []int{2, 3} {
				t.Run(fmt.Sprintf("%s/%d", wt, k), func(t *testing.T) {
					ws := map[string]tensor{"a": quantized(t, wt, cols, rows, r), "b": quantized(t, wt, cols, rows, r), "c": quantized(t, wt, cols, rows, r)}
					compare(t, opCase{
						weights: ws,
						inputs:  map[string][]byte{"x": memview.Bytes(randF32(r, cols, 1))},
						bound:   quantBound,
						build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
							x := b.Input("x", gguf.TypeF32, cols, 1)
							y := b.MatMul(wf("a"), x, "ya")
							y2 := b.MatMul(wf("b"), x, "yb")
							if k == 2 {
								return b.Add(y, y2, "sum")
							}
							y3 := b.MatMul(wf("c"), x, "yc")
							return b.Add(b.Add(y, y2, "ab"), y3, "sum")
						},
					}, g, 3)
				})
			}
		}
	})
}
