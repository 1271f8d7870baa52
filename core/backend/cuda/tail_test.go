package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/memview"
)

// tailLaunches counts the launches of the mat-vec tail kernels (suffix
// _tn, _tr) in g's counts.
func tailLaunches(g *Backend, suffix string) int {
	n := 0
	for fn, c := range g.l.counts {
		if strings.HasPrefix(fn, "mvs_") && strings.HasSuffix(fn, suffix) {
			n += c
		}
	}
	return n
}

// stagedRow reports whether rows of cols weights of type wt are staged
// (16-byte copies need a row length of a multiple of 16 bytes): where not,
// the mat-vec runs without a tail.
func stagedRow(t *testing.T, wt gguf.GGMLType, cols int) bool {
	rb, err := wt.RowBytes(int64(cols))
	if err != nil {
		t.Fatal(err)
	}
	return rb%16 == 0
}

// tailWarps are the one-token mat-vec block sizes (warps) the tail tests
// cycle through (MINFER_CUDA_MVS_WARPS), so each size meets several
// weight types and tails.
var tailWarps = []int64{8, 2, 4, 1}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestMatVecWarps: the one-token staged mat-vecs (one weight, and three
// of one input as one launch) in blocks of 1, 2 and 4 warps against the
// CPU: the row mapping follows the block size.
func TestMatVecWarps(t *testing.T) {
	g := tailBackend(t)
	r := rand.New(rand.NewPCG(35, 36))
	for _, warps := range []int64{1, 2, 4} {
		for _, wt := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
			t.Run(fmt.Sprintf("%s/warps%d", wt, warps), func(t *testing.T) {
				defer func(p int64) { g.mvsWarps = p }(g.mvsWarps)
				g.mvsWarps = warps
				const cols, rows = 2048, 333
				ws := map[string]tensor{"a": quantized(t, wt, cols, rows, r), "b": quantized(t, wt, cols, 37, r), "c": quantized(t, wt, cols, 37, r)}
				one, multi := g.l.counts[stagedMatVec[wt].one], g.l.counts[stagedMatVec[wt].multi]
				compare(t, opCase{weights: ws, bound: quantBound,
					inputs: map[string][]byte{"x": memview.Bytes(randF32(r, cols, 1))},
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						x := b.Input("x", gguf.TypeF32, cols, 1)
						y := b.MatMul(wf("a"), x, "ya") // alone: an add comes between it and the next two
						y37 := b.View(y, "y37", 0, 37, 1)
						d := b.Add(y37, y37, "d")
						return b.Add(b.Add(b.MatMul(wf("b"), x, "yb"), b.MatMul(wf("c"), x, "yc"), "bc"), d, "out")
					}}, g, 3)
				if g.l.counts[stagedMatVec[wt].one] == one || g.l.counts[stagedMatVec[wt].multi] == multi {
					t.Errorf("want launches of %s and %s: %v", stagedMatVec[wt].one, stagedMatVec[wt].multi, g.l.counts)
				}
			})
		}
	}
}

// tailBackend is a backend with every decode path on (the tails too,
// which the defaults keep off), counting its launches.
func tailBackend(t *testing.T) *Backend {
	g := gpu(t)
	g.mvV1, g.off = false, parseDecodeOff("")
	g.l.counts = map[string]int{}
	return g
}

// oneBackend is a backend with the default decode paths (no tails: the
// one-token norm_one and rope_store_one after the mat-vec), counting its
// launches.
func oneBackend(t *testing.T) *Backend {
	g := gpu(t)
	g.mvV1, g.off = false, parseDecodeOff(defaultDecodeOff)
	g.l.counts = map[string]int{}
	return g
}

// tailModes are the two ways the tests below run a one-token mat-vec and
// the norm chain or rope/store after it: "tail" (the mat-vec's last block)
// and "one" (the defaults: norm_one, rope_store_one).
var tailModes = []string{"tail", "one"}

func modeBackend(t *testing.T, mode string) *Backend {
	if mode == "tail" {
		return tailBackend(t)
	}
	return oneBackend(t)
}

// TestMatVecNormTail: a one-token mat-vec whose last block runs the norm
// chain after it (Q6_K rows of 512 are not staged: there the plain
// mat-vec and norm_quant must run) (residual add or none, rms_norm, norm weight, the
// quantization for the next mat-mul: q8_0, q8_1, q8_K or none for an F16
// weight), against the CPU, eager, captured and replayed. The mat-vec's
// output, the residual sum and the weighted norm are part of the output,
// so a tail that skipped one fails; the launch counts must show the tail
// kernel.
func TestMatVecNormTail(t *testing.T) {
	for _, mode := range tailModes {
		t.Run(mode, func(t *testing.T) { testMatVecNormTail(t, mode) })
	}
}

func testMatVecNormTail(t *testing.T, mode string) {
	g := modeBackend(t, mode)
	r := rand.New(rand.NewPCG(31, 32))
	for _, wt := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		for _, n := range []int{512, 2048} {
			for _, wt1 := range []gguf.GGMLType{wt, gguf.TypeQ5_1, gguf.TypeF16} {
				for _, withAdd := range []bool{true, false} {
					warps := tailWarps[(n/512+int(wt1)+btoi(withAdd))%len(tailWarps)]
					t.Run(fmt.Sprintf("%s/n%d/next%s/add%v/warps%d", wt, n, wt1, withAdd, warps), func(t *testing.T) {
						defer func(p int64) { g.mvsWarps = p }(g.mvsWarps)
						g.mvsWarps = warps
						before, beforeOne := tailLaunches(g, "_tn"), g.l.counts["norm_one"]
						ws := map[string]tensor{
							"w0": quantized(t, wt, n, n, r), "w1": quantized(t, wt1, n, n, r),
							"norm": {gguf.TypeF32, []int64{int64(n)}, memview.Bytes(randF32(r, n, 1))},
						}
						inputs := map[string][]byte{"x": memview.Bytes(randF32(r, n, 2))}
						if withAdd {
							inputs["res"] = memview.Bytes(randF32(r, n, 2))
						}
						compare(t, opCase{weights: ws, bound: quantBound,
							inputs: inputs,
							build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
								y0 := b.MatMul(wf("w0"), b.Input("x", gguf.TypeF32, int64(n), 1), "y0")
								s := y0
								if withAdd {
									s = b.Add(y0, b.Input("res", gguf.TypeF32, int64(n), 1), "sum")
								}
								m := b.Mul(b.RMSNorm(s, 1e-5, "nrm"), wf("norm"), "m")
								y1 := b.MatMul(wf("w1"), m, "y1")
								return b.Add(b.Add(y1, s, "y1s"), m, "out")
							}}, g, 3)
						got, one := tailLaunches(g, "_tn")-before, g.l.counts["norm_one"]-beforeOne
						switch {
						case mode == "one" && (got != 0 || one == 0):
							t.Errorf("%d mvs_*_tn and %d norm_one launches, want none and some: %v", got, one, g.l.counts)
						case mode == "tail" && stagedRow(t, wt, n) && got == 0:
							t.Errorf("no mvs_*_tn launch: %v", g.l.counts)
						case mode == "tail" && !stagedRow(t, wt, n) && got != 0:
							t.Errorf("%d mvs_*_tn launches over rows the staged kernels do not take", got)
						}
					})
				}
			}
		}
	}
}

// TestMatVecRopeTail: one token's q/k/v projection (three weights as one
// launch, or one fused weight whose output's parts are views) whose last
// block runs the q and k ropes and the k/v stores, then the attention over
// a cache with earlier rows, against the CPU, eager, captured and
// replayed; F16 and F32 caches, both rope modes. The attention reads the
// stored row and the roped q, and the roped q is part of the output.
func TestMatVecRopeTail(t *testing.T) {
	for _, mode := range tailModes {
		t.Run(mode, func(t *testing.T) { testMatVecRopeTail(t, mode) })
	}
}

func testMatVecRopeTail(t *testing.T, mode string) {
	g := modeBackend(t, mode)
	r := rand.New(rand.NewPCG(33, 34))
	const heads, kvHeads, ctx, past, cols = 8, 2, 256, 137, 2048 // (rows of Q6_K staged too)
	for _, wt := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		for _, hd := range []int{64, 128} {
			for _, kvt := range []gguf.GGMLType{gguf.TypeF16, gguf.TypeF32} {
				for _, fusedW := range []bool{false, true} {
					p := graph.RopeParams{Dims: hd, Mode: graph.RopeNormal, FreqBase: 10000, FreqScale: 1}
					if fusedW {
						p = graph.RopeParams{Dims: hd / 2, Mode: graph.RopeNeoX, FreqBase: 1e6, FreqScale: 0.5}
					}
					warps := tailWarps[(hd/64+btoi(fusedW)+btoi(kvt == gguf.TypeF16))%len(tailWarps)]
					t.Run(fmt.Sprintf("%s/hd%d/%s/fused%v/warps%d", wt, hd, kvt, fusedW, warps), func(t *testing.T) {
						defer func(p int64) { g.mvsWarps = p }(g.mvsWarps)
						g.mvsWarps = warps
						before, beforeOne := tailLaunches(g, "_tr"), g.l.counts["rope_store_one"]+ropeAttnLaunches(g)
						rowLen := hd * kvHeads
						fill := kvFill{kvt, int64(rowLen), ctx}
						mask := make([]float32, ctx)
						for j := past + 1; j < ctx; j++ {
							mask[j] = float32(math.Inf(-1))
						}
						ws := map[string]tensor{
							"wq": quantized(t, wt, cols, hd*heads, r), "wk": quantized(t, wt, cols, rowLen, r), "wv": quantized(t, wt, cols, rowLen, r),
							"wqkv": quantized(t, wt, cols, hd*heads+2*rowLen, r),
						}
						compare(t, opCase{
							kv:      fill.sizes(),
							weights: ws,
							inputs: fill.inputs(map[string][]byte{
								"x": memview.Bytes(randF32(r, cols, 1)), "mask": memview.Bytes(mask),
								"pos": memview.Bytes([]int32{past}), "rows": memview.Bytes([]int32{past}),
							}, randF32(r, rowLen*ctx, 1), randF32(r, rowLen*ctx, 1)),
							bound: quantBound,
							build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
								kc, vc := fill.caches(b)
								x := b.Input("x", gguf.TypeF32, cols, 1)
								var q, k, v *graph.Node
								if fusedW {
									qkv := b.MatMul(wf("wqkv"), x, "qkv")
									q = b.View(qkv, "qc", 0, int64(hd*heads))
									k = b.View(qkv, "kc", int64(4*hd*heads), int64(rowLen))
									v = b.View(qkv, "vc", int64(4*(hd*heads+rowLen)), int64(rowLen))
								} else {
									q = b.MatMul(wf("wq"), x, "q")
									k = b.MatMul(wf("wk"), x, "k")
									v = b.MatMul(wf("wv"), x, "v")
								}
								pos := b.Input("pos", gguf.TypeI32, 1)
								q = b.Rope(b.View(q, "q3", 0, int64(hd), heads, 1), pos, nil, p, "qr")
								k = b.Rope(b.View(k, "k3", 0, int64(hd), kvHeads, 1), pos, nil, p, "kr")
								rows := b.Input("rows", gguf.TypeI32, 1)
								kc = b.StoreKV(kc, b.View(k, "k2", 0, int64(rowLen), 1), rows, "kstore")
								vc = b.StoreKV(vc, v, rows, "vstore")
								att := b.Attention(q, kc, vc, b.Input("mask", gguf.TypeF32, ctx, 1),
									graph.AttentionParams{Scale: 0.088, KVHeads: kvHeads, KVLen: ctx}, "att")
								return b.Add(b.View(att, "attf", 0, int64(hd*heads), 1), b.View(q, "qf", 0, int64(hd*heads), 1), "out")
							},
						}, g, 3)
						// The one-token form: rope_store_one, or (an F16 cache, the
						// attention right after) the group inside the attention.
						got, one := tailLaunches(g, "_tr")-before, g.l.counts["rope_store_one"]+ropeAttnLaunches(g)-beforeOne
						if mode == "tail" && got == 0 {
							t.Errorf("no mvs_*_tr launch: %v", g.l.counts)
						}
						if mode == "one" && (got != 0 || one == 0) {
							t.Errorf("%d mvs_*_tr and %d rope_store_one or attn_x_one_rope_* launches, want none and some: %v", got, one, g.l.counts)
						}
					})
				}
			}
		}
	}
}

// TestMatVecPiped: one token's mat-vec over long Q4_K and Q6_K rows (at
// least pipedMinBlocks blocks) runs the pipelined mvp_*_1 kernel, in
// blocks of 8, 4 and 1 warps, against the CPU's bits; odd row counts, Q4_K rows
// whose last chunk is short, rows past the ring's chunk count. Rows of
// 32 blocks still take mvs_*_1.
func TestMatVecPiped(t *testing.T) {
	g := oneBackend(t)
	// The split kernel (TestMatVecSplit) would take the long Q4_K rows.
	defer func(p bool) { g.off.mvSplit = p }(g.off.mvSplit)
	g.off.mvSplit = true
	r := rand.New(rand.NewPCG(37, 38))
	for _, c := range []struct {
		wt   gguf.GGMLType
		cols int
		pipe bool
	}{
		{gguf.TypeQ4_K, 256 * 41, true}, {gguf.TypeQ4_K, 256 * 56, true}, {gguf.TypeQ4_K, 256 * 32, false},
		{gguf.TypeQ6_K, 256 * 40, true}, {gguf.TypeQ6_K, 256 * 48, true}, {gguf.TypeQ6_K, 256 * 32, false},
	} {
		for _, warps := range []int64{8, 4, 1} {
			t.Run(fmt.Sprintf("%s/cols%d/warps%d", c.wt, c.cols, warps), func(t *testing.T) {
				defer func(p int64) { g.mvsWarps = p }(g.mvsWarps)
				g.mvsWarps = warps
				const rows = 45
				p := pipedMatVec[c.wt].one
				before := g.l.counts[p]
				ws := map[string]tensor{"a": quantized(t, c.wt, c.cols, rows, r)}
				compareExact(t, opCase{weights: ws,
					inputs: map[string][]byte{"x": memview.Bytes(randF32(r, c.cols, 1))},
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						y := b.MatMul(wf("a"), b.Input("x", gguf.TypeF32, int64(c.cols), 1), "y")
						return b.Add(y, y, "out")
					}}, g, 3)
				if got := g.l.counts[p] - before; c.pipe && got == 0 {
					t.Errorf("no %s launch: %v", p, g.l.counts)
				} else if !c.pipe && got != 0 {
					t.Errorf("%d %s launches over rows of %d blocks", got, p, c.cols/256)
				}
			})
		}
	}
}

// TestMatVecSplit: one token's mat-vec over long Q4_K and Q6_K rows (at least
// pipedMinBlocks blocks) runs the split mvk_*_1 kernel (mvkRows
// rows a block, a slice of eight blocks a warp; and mvk_*_1r2, mvk_*_1r8,
// MINFER_CUDA_MVK_ROWS=2, 8) against the CPU's bits: the 8B's
// ffn_down (56 blocks), the 7B's (43), rows with a short last slice (57,
// 33), rows of more slices than a block has warps (120, 129: warps loop),
// Q6_K rows of 40 and 136 blocks (warps loop), row counts not a multiple
// of the block's rows. Rows of 32 blocks (and 22, a 5632-wide row; Q6_K rows not
// a multiple of eight blocks, not of 16 bytes) take mvs_*_1, and
// MINFER_CUDA_DECODE=mvsplit the pipelined kernel.
func TestMatVecSplit(t *testing.T) {
	g := oneBackend(t)
	r := rand.New(rand.NewPCG(41, 42))
	for _, c := range []struct {
		wt    gguf.GGMLType
		cols  int
		split bool
	}{
		{gguf.TypeQ4_K, 256 * 56, true}, {gguf.TypeQ4_K, 256 * 43, true}, {gguf.TypeQ4_K, 256 * 57, true}, {gguf.TypeQ4_K, 256 * 33, true},
		{gguf.TypeQ4_K, 256 * 120, true}, {gguf.TypeQ4_K, 256 * 129, true}, {gguf.TypeQ4_K, 256 * 32, false}, {gguf.TypeQ4_K, 256 * 22, false},
		{gguf.TypeQ6_K, 256 * 56, true}, {gguf.TypeQ6_K, 256 * 48, true}, {gguf.TypeQ6_K, 256 * 40, true}, {gguf.TypeQ6_K, 256 * 136, true},
		{gguf.TypeQ6_K, 256 * 43, false}, {gguf.TypeQ6_K, 256 * 32, false},
	} {
		for _, rows := range []int{45, 3} {
			for _, v := range []struct {
				off bool
				per int64
			}{{false, mvkRows}, {false, 2}, {false, 8}, {true, mvkRows}} {
				off := v.off
				t.Run(fmt.Sprintf("%s/cols%d/rows%d/per%d/off%v", c.wt, c.cols, rows, v.per, off), func(t *testing.T) {
					defer func(p bool, r int64) { g.off.mvSplit, g.splitRows = p, r }(g.off.mvSplit, g.splitRows)
					g.off.mvSplit, g.splitRows = off, v.per
					p := splitName(splitMatVec[c.wt].one, v.per)
					before := g.l.counts[p]
					ws := map[string]tensor{"a": quantized(t, c.wt, c.cols, rows, r)}
					compareExact(t, opCase{weights: ws,
						inputs: map[string][]byte{"x": memview.Bytes(randF32(r, c.cols, 1))},
						build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
							y := b.MatMul(wf("a"), b.Input("x", gguf.TypeF32, int64(c.cols), 1), "y")
							return b.Add(y, y, "out")
						}}, g, 3)
					if got := g.l.counts[p] - before; c.split && !off && got == 0 {
						t.Errorf("no %s launch: %v", p, g.l.counts)
					} else if (!c.split || off) && got != 0 {
						t.Errorf("%d %s launches over rows of %d blocks (switched off: %v)", got, p, c.cols/256, off)
					}
				})
			}
		}
	}
}

// TestSplitConstants: matvec.go's split mat-vec constants are decode.cu's
// (MVK_R, and the warps its __launch_bounds__ allows).
func TestSplitConstants(t *testing.T) {
	src, err := os.ReadFile("kernels/decode.cu")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	if want := fmt.Sprintf("#define MVK_R %d\n", mvkRows); !strings.Contains(s, want) {
		t.Errorf("decode.cu lacks %q", want)
	}
	// MVK(name, T, LB) makes mvk_<name>_1 (MVK_R rows a block), _1r2 and _1r8, each __launch_bounds__(256, LB).
	for rows, call := range map[int64]string{mvkRows: "mvk_1<T, MVK_R>(", 2: "mvk_1<T, 2>(", 8: "mvk_1<T, 8>("} {
		name := splitName("mvk_##name##_1", rows)
		at := strings.Index(s, fmt.Sprintf("__launch_bounds__(%d, LB) %s(", 32*splitMaxWarps, name))
		if at < 0 || !strings.Contains(s[at:min(len(s), at+600)], call) {
			t.Errorf("decode.cu lacks %s, %d threads at most, calling %s", name, 32*splitMaxWarps, call)
		}
	}
	for _, p := range splitMatVec {
		if !strings.Contains(s, "MVK("+strings.TrimSuffix(strings.TrimPrefix(p.one, "mvk_"), "_1")+", ") {
			t.Errorf("decode.cu makes no %s", p.one)
		}
	}
	if got := splitShared(56, 144, splitWarps(56), 4); got != 7*4*1152+4*56*4 {
		t.Errorf("splitShared(56 blocks) = %d", got)
	}
}

// testRope is the rope of the rope/store tests: dims rotated (of the
// head), normal or neox, base 10000.
func testRope(dims int, neox bool) graph.RopeParams {
	p := graph.RopeParams{Dims: dims, Mode: graph.RopeNormal, FreqBase: 10000, FreqScale: 1}
	if neox {
		p.Mode = graph.RopeNeoX
	}
	return p
}

// TestRopeStoreBatch: a batch's q and k ropes and k and v stores as one
// rope_store_pair launch (the k rope's values stored into the k cache as
// they are made), and the prefill attention over the caches after it,
// against the CPU's bits: head sizes 64 and 128, normal and neox, rows
// past a partial rope (dims < head size), tokens up to the cache's last
// row; MINFER_CUDA_DECODE=store
// runs rope_pair and the stores instead. The k rope's output is in the
// output too.
func TestRopeStoreBatch(t *testing.T) {
	g := oneBackend(t)
	// The exact flash kernels (a backend without quantized weights would
	// take the tensor-core ones, whose last bits are their own).
	defer func(e bool) { g.fattnExact = e }(g.fattnExact)
	g.fattnExact = true
	r := rand.New(rand.NewPCG(37, 38))
	const heads, kvHeads, ctx = 8, 2, 256
	for _, off := range []bool{false, true} {
		for _, tc := range []struct {
			hd, past, T, dims int
			neox              bool
		}{{64, 0, 40, 64, false}, {128, 100, 33, 96, true}, {64, 219, 37, 64, true}} {
			t.Run(fmt.Sprintf("hd%d/past%d/T%d/dims%d/neox%v/storeoff%v", tc.hd, tc.past, tc.T, tc.dims, tc.neox, off), func(t *testing.T) {
				defer func(o decodeOff) { g.off = o }(g.off)
				g.off.store = off
				hd, rowLen, T := tc.hd, tc.hd*kvHeads, tc.T
				kvLen := ctx
				mask := make([]float32, kvLen*T)
				pos, rows := make([]int32, T), make([]int32, T)
				for i := range T {
					pos[i], rows[i] = int32(tc.past+i), int32(tc.past+i)
					for j := range kvLen {
						if j > tc.past+i {
							mask[i*kvLen+j] = float32(math.Inf(-1))
						}
					}
				}
				p := testRope(tc.dims, tc.neox)
				fill := kvFill{gguf.TypeF16, int64(rowLen), ctx}
				fused, pair := g.l.counts["rope_store_pair"], g.l.counts["rope_pair"]
				compareExact(t, opCase{
					kv: fill.sizes(),
					inputs: fill.inputs(map[string][]byte{
						"q": memview.Bytes(randF32(r, hd*heads*T, 1)), "k": memview.Bytes(randF32(r, rowLen*T, 1)), "v": memview.Bytes(randF32(r, rowLen*T, 1)),
						"pos": memview.Bytes(pos), "rows": memview.Bytes(rows), "mask": memview.Bytes(mask),
					}, randF32(r, rowLen*ctx, 1), randF32(r, rowLen*ctx, 1)),
					build: func(b *graph.Builder, _ func(string) *graph.Node) *graph.Node {
						kc, vc := fill.caches(b)
						ps := b.Input("pos", gguf.TypeI32, int64(T))
						q := b.Rope(b.Input("q", gguf.TypeF32, int64(hd), heads, int64(T)), ps, nil, p, "qrope")
						k := b.Rope(b.Input("k", gguf.TypeF32, int64(hd), kvHeads, int64(T)), ps, nil, p, "krope")
						rs := b.Input("rows", gguf.TypeI32, int64(T))
						kc = b.StoreKV(kc, b.View(k, "k2", 0, int64(rowLen), int64(T)), rs, "kstore")
						vc = b.StoreKV(vc, b.Input("v", gguf.TypeF32, int64(rowLen), int64(T)), rs, "vstore")
						m := b.Input("mask", gguf.TypeF32, int64(kvLen), int64(T))
						att := b.Attention(q, kc, vc, m, graph.AttentionParams{Scale: float32(1 / math.Sqrt(float64(hd))), KVHeads: kvHeads, KVLen: kvLen}, "att")
						n := int64(rowLen * T)
						return b.Add(b.View(att, "av", 0, n), b.View(k, "kv", 0, n), "out")
					},
				}, g, 3)
				fused, pair = g.l.counts["rope_store_pair"]-fused, g.l.counts["rope_pair"]-pair
				if (fused > 0) == off || (pair > 0) != off {
					t.Errorf("store off %v: %d rope_store_pair and %d rope_pair launches: %v", off, fused, pair, g.l.counts)
				}
			})
		}
	}
}

// TestRopeStoreAttention: a decode block's attention part — one token's q
// and k roped, k and v stored into F16 caches that hold earlier rows, the
// one-block GQA attention over them — with the fusion (attn_x_one_rope_*,
// the default) and without it (MINFER_CUDA_DECODE=ropeattn: rope_store_one,
// then attn_x_one): the output is the CPU's bit for bit either way, over
// head sizes, rope layouts and dims, the current row first, last and
// inside the attended span; the fused run launched the fused kernel and
// the other none.
func TestRopeStoreAttention(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const heads, kvHeads, ctx = 8, 2, 512
	for _, fused := range []bool{true, false} {
		t.Run(fmt.Sprintf("fused%v", fused), func(t *testing.T) {
			g := gpu(t)
			g.off.ropeAttn = !fused
			g.l.counts = map[string]int{}
			for _, tc := range []struct {
				hd, past, kvLen, dims int
				neox                  bool
			}{{64, 0, 32, 64, false}, {64, 31, 32, 64, true}, {128, 100, 128, 128, false}, {128, 255, 256, 96, true},
				{96, 40, 64, 96, false}, {256, 7, 32, 256, false}, {128, 3, 32, 128, true}} {
				t.Run(fmt.Sprintf("hd%d/past%d/kv%d/dims%d/neox%v", tc.hd, tc.past, tc.kvLen, tc.dims, tc.neox), func(t *testing.T) {
					hd, rowLen := tc.hd, tc.hd*kvHeads
					mask := make([]float32, tc.kvLen)
					for j := range mask {
						if j > tc.past {
							mask[j] = float32(math.Inf(-1))
						}
					}
					p := testRope(tc.dims, tc.neox)
					fill := kvFill{gguf.TypeF16, int64(rowLen), ctx}
					compareExact(t, opCase{
						kv: fill.sizes(),
						inputs: fill.inputs(map[string][]byte{
							"q": memview.Bytes(randF32(r, hd*heads, 1)), "k": memview.Bytes(randF32(r, rowLen, 1)), "v": memview.Bytes(randF32(r, rowLen, 1)),
							"pos": memview.Bytes([]int32{int32(tc.past)}), "rows": memview.Bytes([]int32{int32(tc.past)}), "mask": memview.Bytes(mask),
						}, randF32(r, rowLen*ctx, 1), randF32(r, rowLen*ctx, 1)),
						build: func(b *graph.Builder, _ func(string) *graph.Node) *graph.Node {
							kc, vc := fill.caches(b)
							pos := b.Input("pos", gguf.TypeI32, 1)
							q := b.Rope(b.Input("q", gguf.TypeF32, int64(hd), heads, 1), pos, nil, p, "qrope")
							k := b.Rope(b.Input("k", gguf.TypeF32, int64(hd), kvHeads, 1), pos, nil, p, "krope")
							rows := b.Input("rows", gguf.TypeI32, 1)
							kc = b.StoreKV(kc, b.View(k, "k2", 0, int64(rowLen), 1), rows, "kstore")
							vc = b.StoreKV(vc, b.Input("v", gguf.TypeF32, int64(rowLen), 1), rows, "vstore")
							m := b.Input("mask", gguf.TypeF32, int64(tc.kvLen), 1)
							return b.Attention(q, kc, vc, m, graph.AttentionParams{Scale: float32(1 / math.Sqrt(float64(hd))), KVHeads: kvHeads, KVLen: tc.kvLen}, "att")
						},
					}, g, 2)
				})
			}
			n := 0
			for fn, c := range g.l.counts {
				if strings.HasPrefix(fn, "attn_x_one_rope_") {
					n += c
				}
			}
			t.Logf("%d fused launches: %v", n, g.l.counts)
			if fused && n == 0 || !fused && n > 0 {
				t.Errorf("fused %v: %d attn_x_one_rope launches", fused, n)
			}
			// The caches are filled in the same step, before the group:
			// its reads wait (cachesQuietBefore).
			if e := g.l.counts["attn_x_one_rope early"]; e != 0 {
				t.Errorf("%d launches read the caches before their wait, with the fill before them in the step", e)
			}
		})
	}
}

// TestRopeStoreAttentionEarly: one decode step's q/k/v mat-vec, rope/store
// group and attention over caches an earlier step wrote (here the host):
// attn_x_one_rope_* reads the mask, the row and the other positions' cache
// rows before its PDL wait (cachesQuietBefore), and its values are the
// CPU's; with the caches written earlier in the step, the reads wait.
func TestRopeStoreAttentionEarly(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	const heads, kvHeads, ctx, cols = 8, 2, 256, 1024
	g := gpu(t)
	g.l.counts = map[string]int{}
	for _, tc := range []struct{ hd, past, kvLen int }{{64, 0, 32}, {64, 137, 160}, {128, 100, 128}, {128, 255, 256}, {96, 40, 64}, {256, 7, 32}} {
		for _, fillInStep := range []bool{false, true} {
			t.Run(fmt.Sprintf("hd%d/past%d/kv%d/fill%v", tc.hd, tc.past, tc.kvLen, fillInStep), func(t *testing.T) {
				hd, rowLen := tc.hd, tc.hd*kvHeads
				mask := make([]float32, tc.kvLen)
				for j := range mask {
					if j > tc.past || j%5 == 3 && j != tc.past {
						mask[j] = float32(math.Inf(-1))
					}
				}
				fill := kvFill{gguf.TypeF16, int64(rowLen), ctx}
				cache := func() []byte {
					h := make([]uint16, rowLen*ctx)
					for i := range h {
						h[i] = quant.F32ToF16(float32(r.Float64()*2 - 1))
					}
					return memview.Bytes(h)
				}
				p := testRope(hd, true)
				before := g.l.counts["attn_x_one_rope early"]
				inputs := map[string][]byte{
					"x": memview.Bytes(randF32(r, cols, 1)), "pos": memview.Bytes([]int32{int32(tc.past)}),
					"rows": memview.Bytes([]int32{int32(tc.past)}), "mask": memview.Bytes(mask),
				}
				if fillInStep { // the fill's inputs exist only in its graph
					fill.inputs(inputs, randF32(r, rowLen*ctx, 1), randF32(r, rowLen*ctx, 1))
				}
				compare(t, opCase{
					kv:     fill.sizes(),
					kvInit: map[string][]byte{"k": cache(), "v": cache()},
					weights: map[string]tensor{
						"wq": quantized(t, gguf.TypeQ8_0, cols, hd*heads, r), "wk": quantized(t, gguf.TypeQ8_0, cols, rowLen, r),
						"wv": quantized(t, gguf.TypeQ8_0, cols, rowLen, r),
					},
					inputs: inputs,
					bound:  quantBound,
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						var kc, vc *graph.Node
						if fillInStep {
							kc, vc = fill.caches(b)
						} else {
							kc, vc = b.KV("k", gguf.TypeF16, int64(rowLen), ctx), b.KV("v", gguf.TypeF16, int64(rowLen), ctx)
						}
						x := b.Input("x", gguf.TypeF32, cols, 1)
						q, k, v := b.MatMul(wf("wq"), x, "q"), b.MatMul(wf("wk"), x, "k"), b.MatMul(wf("wv"), x, "v")
						pos := b.Input("pos", gguf.TypeI32, 1)
						q = b.Rope(b.View(q, "q3", 0, int64(hd), heads, 1), pos, nil, p, "qr")
						k = b.Rope(b.View(k, "k3", 0, int64(hd), kvHeads, 1), pos, nil, p, "kr")
						rows := b.Input("rows", gguf.TypeI32, 1)
						kc = b.StoreKV(kc, b.View(k, "k2", 0, int64(rowLen), 1), rows, "kstore")
						vc = b.StoreKV(vc, v, rows, "vstore")
						return b.Attention(q, kc, vc, b.Input("mask", gguf.TypeF32, int64(tc.kvLen), 1),
							graph.AttentionParams{Scale: float32(1 / math.Sqrt(float64(hd))), KVHeads: kvHeads, KVLen: tc.kvLen}, "att")
					},
				}, g, 3)
				early := g.l.counts["attn_x_one_rope early"] - before
				if fillInStep && early != 0 || !fillInStep && early == 0 {
					t.Errorf("fill in the step %v: %d launches read before their wait: %v", fillInStep, early, g.l.counts)
				}
			})
		}
	}
}

// ropeAttnLaunches is the launches of attn_x_one_rope_* g counted.
func ropeAttnLaunches(g *Backend) int {
	n := 0
	for fn, c := range g.l.counts {
		if strings.HasPrefix(fn, "attn_x_one_rope_") {
			n += c
		}
	}
	return n
}

// TestSwigluMatVec: one token's gate and up mat-muls, the swiglu of their
// outputs and the down mat-mul after it (the product and the gate in the
// output too) against the CPU bit for bit: the fused mvs_*_w launch (the
// product quantized for the down mat-vec by the last block of each group)
// and no swiglu_quant for Q4_0 and Q4_K (and Q8_0, Q6_K), in blocks of 8,
// 4 and 3 rows (warps 8 and 3 for Q4_0; 8, 4 and 6 for Q4_K: quantization
// groups that do and do not start at a block's first row), rows that are
// not a multiple of the block's rows, and a down weight without a fused
// quantization (F32: the product alone, rows not a multiple of 16);
// Q5_1 (no staged kernel), Q4_K in blocks of one warp and Q8_0 in blocks
// of three (odd slot counts: a block takes gate and up rows in pairs) and
// the kernel switched off (swmv: the default list's choice) run the two
// launches instead.
func TestSwigluMatVec(t *testing.T) {
	g := oneBackend(t)
	r := rand.New(rand.NewPCG(43, 44))
	type swCase struct {
		wt, dt     gguf.GGMLType // gate/up and down weights
		cols, rows int
		warps      int64 // 0: the launch's choice
		fused      bool
	}
	cases := []swCase{
		{gguf.TypeQ4_0, gguf.TypeQ4_0, 2048, 5632, 0, true},
		{gguf.TypeQ4_0, gguf.TypeQ4_0, 512, 352, 3, true},
		{gguf.TypeQ4_0, gguf.TypeQ4_0, 512, 1024, 8, true},
		{gguf.TypeQ4_0, gguf.TypeF32, 512, 100, 3, true},
		{gguf.TypeQ4_K, gguf.TypeQ4_K, 4096, 14336, 0, true},
		{gguf.TypeQ4_K, gguf.TypeQ6_K, 1024, 1536, 6, true},
		{gguf.TypeQ4_K, gguf.TypeQ4_K, 1024, 768, 4, true},
		{gguf.TypeQ4_K, gguf.TypeF32, 1024, 37, 6, true},
		{gguf.TypeQ8_0, gguf.TypeQ8_0, 1024, 800, 4, true},
		{gguf.TypeQ8_0, gguf.TypeQ8_0, 1024, 800, 3, false}, // one row a warp: three slots, odd
		{gguf.TypeQ6_K, gguf.TypeQ4_K, 2048, 1280, 0, true},
		{gguf.TypeQ4_K, gguf.TypeQ4_K, 1024, 512, 1, false},
		{gguf.TypeQ5_1, gguf.TypeQ5_1, 1024, 512, 0, false},
	}
	for _, off := range []bool{false, true} {
		for _, c := range cases {
			name := fmt.Sprintf("%s-%s/cols%d/rows%d/warps%d/swmvoff%v", c.wt, c.dt, c.cols, c.rows, c.warps, off)
			t.Run(name, func(t *testing.T) {
				defer func(o decodeOff, w int64) { g.off, g.mvsWarps = o, w }(g.off, g.mvsWarps)
				g.off.swMV = off // (the default list keeps it off: defaultDecodeOff)
				g.mvsWarps = c.warps
				down := quantized(t, c.dt, c.rows, c.cols, r)
				if c.dt == gguf.TypeF32 {
					down = tensor{gguf.TypeF32, []int64{int64(c.rows), int64(c.cols)}, memview.Bytes(randF32(r, c.rows*c.cols, 1))}
				}
				ws := map[string]tensor{"g": quantized(t, c.wt, c.cols, c.rows, r), "u": quantized(t, c.wt, c.cols, c.rows, r), "d": down}
				fused := ""
				if s, ok := stagedMatVec[c.wt]; ok {
					fused = s.swiglu
				}
				f0, q0 := g.l.counts[fused], g.l.counts["swiglu_quant"]+g.l.counts["swiglu"]
				compareExact(t, opCase{weights: ws, inputs: map[string][]byte{"x": memview.Bytes(randF32(r, c.cols, 1))},
					build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
						x := b.Input("x", gguf.TypeF32, int64(c.cols), 1)
						gt := b.MatMul(wf("g"), x, "gate")
						up := b.MatMul(wf("u"), x, "up")
						s := b.SwiGLU(gt, up, "s")
						y := b.MatMul(wf("d"), s, "y")
						// The product and the gate's first rows in the output.
						k := int64(min(c.rows, c.cols))
						sk := b.View(s, "sk", 0, k, 1)
						gk := b.View(gt, "gk", 0, k, 1)
						yk := b.View(y, "yk", 0, k, 1)
						return b.Add(b.Add(yk, sk, "ys"), gk, "out")
					}}, g, 3)
				ran, sw := g.l.counts[fused]-f0, g.l.counts["swiglu_quant"]+g.l.counts["swiglu"]-q0
				if want := c.fused && !off; (ran > 0) != want || (sw > 0) == want {
					t.Errorf("fused %s launches %d, swiglu launches %d; want fused %v: %v", fused, ran, sw, want, g.l.counts)
				}
			})
		}
	}
}
