package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/minfer/minfer/core/alloc"
	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/core/backend/cpu"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
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

// opCase is one small graph: the builder makes it, the inputs fill it.
type opCase struct {
	name    string
	build   func(b *graph.Builder, w func(name string) *graph.Node) *graph.Node
	weights map[string]tensor
	inputs  map[string][]byte
	kv      map[string]int64 // persistent regions: bytes
	bound   float64
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
	var res []float32
	for step := 0; step < steps; step++ {
		if err := graph.Allocate(g, ga, func(name string) (alloc.BufRef, bool) { r, ok := kv[name]; return r, ok }); err != nil {
			t.Fatal(err)
		}
		for name, data := range c.inputs {
			n, _ := g.Input(name)
			if err := be.WriteHostWindow(n.Buf, data); err != nil {
				t.Fatal(err)
			}
		}
		if err := backend.Execute(context.Background(), g, []backend.Backend{be}); err != nil {
			t.Fatal(err)
		}
		res = make([]float32, out.Buf.Len/4)
		if err := be.ReadHostWindow(out.Buf, unsafe.Slice((*byte)(unsafe.Pointer(&res[0])), out.Buf.Len)); err != nil {
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

func f32bytes(v []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*4)
}

func i32bytes(v []int32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*4)
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
	e := nmse(got, want)
	t.Logf("NMSE %.3g (bound %.0g)", e, c.bound)
	if e > c.bound {
		t.Errorf("NMSE %.3g > %.0g", e, c.bound)
	}
}

// TestMatMulEveryWeightType: the mat-vec (one token), the batched kernel
// (odd token counts, more than one grid row of eight) against the CPU's
// vec-dot, for every weight type, odd row counts.
func TestMatMulEveryWeightType(t *testing.T) {
	g := gpu(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, wt := range weightTypes {
		for _, T := range []int{1, 3, 17} {
			cols, rows := 512, 333
			t.Run(fmt.Sprintf("%s/T%d", wt, T), func(t *testing.T) {
				w := quantized(t, wt, cols, rows, r)
				c := opCase{
					weights: map[string]tensor{"w": w},
					inputs:  map[string][]byte{"x": f32bytes(randF32(r, cols*T, 2))},
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						return b.MatMul(wf("w"), b.Input("x", gguf.TypeF32, int64(cols), int64(T)), "y")
					},
					bound: 1e-5,
				}
				if wt == gguf.TypeF32 || wt == gguf.TypeF16 || wt == gguf.TypeBF16 {
					c.bound = 1e-7
				}
				compare(t, c, g, 3) // three steps: eager, captured, replayed
			})
		}
	}
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
				inputs:  map[string][]byte{"ids": i32bytes(ids)},
				build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
					return b.GetRows(wf("emb"), b.Input("ids", gguf.TypeI32, int64(len(ids))), "rows")
				},
				bound: 1e-7,
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
		x := f32bytes(randF32(r, n*T, 3))
		y := f32bytes(randF32(r, n*T, 3))
		norm := tensor{gguf.TypeF32, []int64{int64(n)}, f32bytes(randF32(r, n, 1))}
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
		}
		for name, build := range cases {
			t.Run(fmt.Sprintf("%s/%dx%d", name, n, T), func(t *testing.T) {
				inputs := map[string][]byte{"x": x}
				if strings.HasSuffix(name, "full") || name == "swiglu" {
					inputs["y"] = y
				}
				compare(t, opCase{weights: map[string]tensor{"norm": norm}, inputs: inputs, build: build, bound: 1e-7}, g, 2)
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
					weights: map[string]tensor{"freqs": {gguf.TypeF32, []int64{int64(p.Dims / 2)}, f32bytes(freqs)}},
					inputs:  map[string][]byte{"x": f32bytes(randF32(r, hd*heads*T, 2)), "pos": i32bytes(pos)},
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						var f *graph.Node
						if withFreqs {
							f = wf("freqs")
						}
						return b.Rope(b.Input("x", gguf.TypeF32, int64(hd), int64(heads), int64(T)), b.Input("pos", gguf.TypeI32, int64(T)), f, p, "r")
					},
					bound: 1e-7,
				}, g, 2)
			})
		}
	}
}

// TestStoreKVAndAttention: new rows stored into an F16 or F32 cache that
// already holds earlier positions, then GQA attention over it with a
// causal mask; one token and a batch; a span at the 256 class boundary.
func TestStoreKVAndAttention(t *testing.T) {
	g := gpu(t)
	r := rand.New(rand.NewPCG(9, 10))
	hd, heads, kvHeads, ctx := 64, 8, 2, 512
	for _, kvt := range []gguf.GGMLType{gguf.TypeF16, gguf.TypeF32} {
		for _, tc := range []struct{ past, T, kvLen int }{{0, 1, 256}, {200, 7, 256}, {255, 1, 256}, {256, 1, 512}, {0, 33, 256}} {
			t.Run(fmt.Sprintf("%s/past%d/T%d/kv%d", kvt, tc.past, tc.T, tc.kvLen), func(t *testing.T) {
				rowLen := hd * kvHeads
				rb, _ := kvt.RowBytes(int64(rowLen))
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
				allRows := make([]int32, ctx)
				for i := range allRows {
					allRows[i] = int32(i)
				}
				c := opCase{
					kv: map[string]int64{"k": rb * int64(ctx), "v": rb * int64(ctx)},
					inputs: map[string][]byte{
						"q": f32bytes(randF32(r, hd*heads*tc.T, 1)), "knew": f32bytes(randF32(r, rowLen*tc.T, 1)),
						"vnew": f32bytes(randF32(r, rowLen*tc.T, 1)), "rows": i32bytes(rows), "mask": f32bytes(mask),
						"kall": f32bytes(prevK), "vall": f32bytes(prevV), "allrows": i32bytes(allRows),
					},
					build: func(b *graph.Builder, _ func(string) *graph.Node) *graph.Node {
						kc := b.KV("k", kvt, int64(rowLen), int64(ctx))
						vc := b.KV("v", kvt, int64(rowLen), int64(ctx))
						all := b.Input("allrows", gguf.TypeI32, int64(ctx))
						kc = b.StoreKV(kc, b.Input("kall", gguf.TypeF32, int64(rowLen), int64(ctx)), all, "kfill")
						vc = b.StoreKV(vc, b.Input("vall", gguf.TypeF32, int64(rowLen), int64(ctx)), all, "vfill")
						rowsN := b.Input("rows", gguf.TypeI32, int64(tc.T))
						kc = b.StoreKV(kc, b.Input("knew", gguf.TypeF32, int64(rowLen), int64(tc.T)), rowsN, "kstore")
						vc = b.StoreKV(vc, b.Input("vnew", gguf.TypeF32, int64(rowLen), int64(tc.T)), rowsN, "vstore")
						q := b.Input("q", gguf.TypeF32, int64(hd), int64(heads), int64(tc.T))
						m := b.Input("mask", gguf.TypeF32, int64(tc.kvLen), int64(tc.T))
						return b.Attention(q, kc, vc, m, graph.AttentionParams{Scale: 0.125, KVHeads: kvHeads, KVLen: tc.kvLen}, "att")
					},
					bound: 1e-7,
				}
				compare(t, c, g, 2)
			})
		}
	}
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
