package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/core/backend/cpu"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/memview"
	"github.com/minfer/minfer/internal/normtie"
)

// normTieEps is the rms_norm eps of the tie-row tests (tieRow picks its
// tie for it).
const normTieEps = 1e-5

// tieRow is normtie.Row with the tests' eps. The kernels' order without
// rms_mean's check gives the tie's successor, a one-ulp different scale
// and so a different norm everywhere.
func tieRow(r *rand.Rand, p int, shuffle bool) []float32 {
	return normtie.Row(r, p, normTieEps, shuffle)
}

// compareExact is compare with no bound: every output the CPU's bits.
func compareExact(t *testing.T, c opCase, g *Backend, steps int) {
	t.Helper()
	host := cpu.New(2)
	defer host.Close()
	want := runCase(t, host, c, 1)
	got := runCase(t, g, c, steps)
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got), len(want))
	}
	diffs, first := 0, -1
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			if diffs == 0 {
				first = i
			}
			diffs++
		}
	}
	if diffs > 0 {
		t.Errorf("%d of %d outputs differ from the CPU's bits (first at %d: %v, want %v)", diffs, len(want), first, got[first], want[first])
	}
}

// zeroWeight is a weight of type wt, cols×rows, all zeros: its mat-vec is
// ±0 in every order, so a residual add after it passes the residual
// through exactly.
func zeroWeight(t *testing.T, wt gguf.GGMLType, cols, rows int) tensor {
	t.Helper()
	rb, err := wt.RowBytes(int64(cols))
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, int(rb)*rows)
	if err := quant.QuantizeWeights(wt, make([]float32, cols*rows), data); err != nil {
		t.Fatal(err)
	}
	return tensor{wt, []int64{int64(cols), int64(rows)}, data}
}

// normLaunches counts the launches of kernels whose names match.
func normLaunches(g *Backend, match func(string) bool) int {
	n := 0
	for fn, c := range g.l.counts {
		if match(fn) {
			n += c
		}
	}
	return n
}

func isNormQuant(fn string) bool { return fn == "norm_quant" }

// TestNormTieRows: rows whose rms_norm mean is a float32 tie for the
// CPU's serial sum, where the kernels' parallel double sums land on the
// other side, so only rms_mean's check and its serial fallback give the
// CPU's mean (bench/results/2026-12-01-normexact/emu: the kernels before
// it differ on every such row), together with shuffled tie rows and
// random rows; every path that sums squares for rms_norm: norm_quant
// (rms_norm alone and times its weight, several rows; the residual chain
// before a mat-vec, of three tokens), norm_one (that chain of one token,
// and after a one-token mat-vec) and the norm tail mvs_*_tn (a one-token
// mat-vec, the residual add, the chain), eager,
// captured and replayed. The outputs are built to be exact (the mat-vecs
// times a zero weight, a zero weight's mat-vec under the residual) and
// must be the CPU's bits, not merely close.
func TestNormTieRows(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	t.Run("norm_quant", func(t *testing.T) {
		g := tailBackend(t)
		for _, p := range []int{9, 11, 12} {
			n := 1 << p
			x := append(append(tieRow(r, p, false), randF32(r, n, 3)...), tieRow(r, p, true)...)
			ws := map[string]tensor{"norm": {gguf.TypeF32, []int64{int64(n)}, memview.Bytes(randF32(r, n, 1))}}
			for _, mul := range []bool{false, true} {
				t.Run(fmt.Sprintf("n%d/mul%v", n, mul), func(t *testing.T) {
					before := normLaunches(g, isNormQuant)
					compareExact(t, opCase{weights: ws, inputs: map[string][]byte{"x": memview.Bytes(x)},
						build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
							nr := b.RMSNorm(b.Input("x", gguf.TypeF32, int64(n), 3), normTieEps, "n")
							if mul {
								return b.Mul(nr, wf("norm"), "m")
							}
							return nr
						}}, g, 3)
					if normLaunches(g, isNormQuant) == before {
						t.Errorf("no norm_quant launch: %v", g.l.counts)
					}
				})
			}
		}
	})
	t.Run("chain", func(t *testing.T) {
		mvVariants(t, newVariants{staged: true}, func(t *testing.T, g *Backend, v1 bool) {
			for _, wt := range []gguf.GGMLType{gguf.TypeQ8_0, gguf.TypeQ4_K} {
				for _, p := range []int{11, 12} {
					if wt == gguf.TypeQ4_K && p == 12 {
						continue // (quantizing the 4096² weight on the host takes seconds)
					}
					for _, T := range []int{1, 3} {
						n := 1 << p
						t.Run(fmt.Sprintf("%s/n%d/T%d", wt, n, T), func(t *testing.T) {
							var x []float32
							for tok := 0; tok < T; tok++ {
								x = append(x, tieRow(r, p, tok == 1)...)
							}
							ws := map[string]tensor{
								"w1":   quantized(t, wt, n, n, r),
								"norm": {gguf.TypeF32, []int64{int64(n)}, memview.Bytes(randF32(r, n, 1))},
								"zero": {gguf.TypeF32, []int64{int64(n)}, make([]byte, 4*n)},
							}
							in := map[string][]byte{"x": memview.Bytes(x), "res": make([]byte, 4*n*T)}
							before, beforeOne := normLaunches(g, isNormQuant), g.l.counts["norm_one"]
							compareExact(t, opCase{weights: ws, inputs: in,
								build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
									x := b.Input("x", gguf.TypeF32, int64(n), int64(T))
									res := b.Input("res", gguf.TypeF32, int64(n), int64(T))
									sum := b.Add(x, res, "sum")
									m := b.Mul(b.RMSNorm(sum, normTieEps, "nrm"), wf("norm"), "m")
									y1 := b.MatMul(wf("w1"), m, "y1")
									o := b.Add(b.Add(b.Mul(y1, wf("zero"), "y0"), sum, "s"), m, "o")
									// x and res read again at the end, so the chain's inputs
									// stay live past the mat-vec.
									return b.Add(o, b.Mul(b.Add(x, res, "xr"), wf("zero"), "xz"), "out")
								}}, g, 3)
							// One token's chain runs norm_one, a batch's norm_quant.
							if T == 1 && g.l.counts["norm_one"] == beforeOne {
								t.Errorf("no norm_one launch: %v", g.l.counts)
							}
							if T > 1 && normLaunches(g, isNormQuant) == before {
								t.Errorf("no norm_quant launch: %v", g.l.counts)
							}
						})
					}
				}
			}
		})
	})
	for _, mode := range tailModes {
		t.Run(mode, func(t *testing.T) { normTieTail(t, r, mode) })
	}
}

// normTieTail: TestNormTieRows' one-token mat-vec followed by the norm
// chain of a tie row (the residual add's other input), in its last block
// (mode "tail") or in norm_one after it ("one", the defaults).
func normTieTail(t *testing.T, r *rand.Rand, mode string) {
	{
		g := modeBackend(t, mode)
		for _, wt := range []gguf.GGMLType{gguf.TypeQ8_0, gguf.TypeQ4_K} {
			for _, p := range []int{11, 12} {
				if wt == gguf.TypeQ4_K && p == 12 {
					continue
				}
				for _, warps := range []int64{8, 2} {
					n := 1 << p
					t.Run(fmt.Sprintf("%s/n%d/warps%d", wt, n, warps), func(t *testing.T) {
						defer func(p int64) { g.mvsWarps = p }(g.mvsWarps)
						g.mvsWarps = warps
						ws := map[string]tensor{
							"w0": zeroWeight(t, wt, n, n), "w1": quantized(t, wt, n, n, r),
							"norm": {gguf.TypeF32, []int64{int64(n)}, memview.Bytes(randF32(r, n, 1))},
							"zero": {gguf.TypeF32, []int64{int64(n)}, make([]byte, 4*n)},
						}
						in := map[string][]byte{"x": memview.Bytes(randF32(r, n, 2)), "res": memview.Bytes(tieRow(r, p, warps == 2))}
						before, beforeOne := tailLaunches(g, "_tn"), g.l.counts["norm_one"]
						compareExact(t, opCase{weights: ws, inputs: in,
							build: func(b *graph.Builder, wf func(string) *graph.Node) *graph.Node {
								y0 := b.MatMul(wf("w0"), b.Input("x", gguf.TypeF32, int64(n), 1), "y0")
								s := b.Add(y0, b.Input("res", gguf.TypeF32, int64(n), 1), "sum")
								m := b.Mul(b.RMSNorm(s, normTieEps, "nrm"), wf("norm"), "m")
								y1 := b.MatMul(wf("w1"), m, "y1")
								return b.Add(b.Add(b.Mul(y1, wf("zero"), "z"), s, "y1s"), m, "out")
							}}, g, 3)
						if mode == "tail" && tailLaunches(g, "_tn") == before {
							t.Errorf("no mvs_*_tn launch: %v", g.l.counts)
						}
						if mode == "one" && g.l.counts["norm_one"] == beforeOne {
							t.Errorf("no norm_one launch: %v", g.l.counts)
						}
					})
				}
			}
		}
	}
}
