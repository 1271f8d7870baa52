package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// breadthDots are the dots of the remaining weight types (one-token, and
// four-token where the level has it), checked like twinDots: same bits as
// the generic body at every level, on random rows, zero blocks,
// max-magnitude scales and mixed rows, at odd lengths.
var breadthDots = []twinDot{
	{gguf.TypeQ4_1, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ4_1Q8_1 },
		func(k *kernelSet) func(w, x []byte, s int, o *[4]float32) { return k.dot4Q4_1Q8_1 }},
	{gguf.TypeQ5_0, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ5_0Q8_0 },
		func(k *kernelSet) func(w, x []byte, s int, o *[4]float32) { return k.dot4Q5_0Q8_0 }},
	{gguf.TypeQ5_1, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ5_1Q8_1 },
		func(k *kernelSet) func(w, x []byte, s int, o *[4]float32) { return k.dot4Q5_1Q8_1 }},
	{gguf.TypeQ2_K, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ2_KQ8_K },
		func(k *kernelSet) func(w, x []byte, s int, o *[4]float32) { return k.dot4Q2_KQ8_K }},
	{gguf.TypeQ3_K, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ3_KQ8_K },
		func(k *kernelSet) func(w, x []byte, s int, o *[4]float32) { return k.dot4Q3_KQ8_K }},
	{gguf.TypeQ5_K, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ5_KQ8_K },
		func(k *kernelSet) func(w, x []byte, s int, o *[4]float32) { return k.dot4Q5_KQ8_K }},
	{gguf.TypeF32, func(k *kernelSet) func(w, x []byte) float32 { return k.dotF32Bytes }, nil},
	{gguf.TypeBF16, func(k *kernelSet) func(w, x []byte) float32 { return k.dotBF16 }, nil},
}

func TestBreadthKernelsMatchGenericTwins(t *testing.T) {
	checkTwinDots(t, breadthDots, 1000, 52)
}

// TestBreadthKernelsReachVecDot: VecDot and NewKernel (Dot, Dot4) use the
// active level's kernel for every type (a level forced to Generic gives the
// generic bits; the default gives the level's).
func TestBreadthKernelsReachVecDot(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, lvl := range Levels() {
		ks := levels[lvl]
		for _, td := range breadthDots {
			n := 37 * td.wt.BlockSize() * 8
			w, x := twinRows(t, r, td.wt, n, edgeRandom)
			want := td.one(ks)(w, x)
			func() {
				defer ForceLevel(lvl)()
				if got := VecDot(td.wt, n, w, x); !sameBits(got, want) {
					t.Errorf("%s %s: VecDot %g, level kernel %g", lvl, td.wt, got, want)
				}
				k, err := NewKernel(td.wt, n)
				if err != nil {
					t.Fatal(err)
				}
				if got := k.Dot(w, x); !sameBits(got, want) {
					t.Errorf("%s %s: Kernel.Dot %g, level kernel %g", lvl, td.wt, got, want)
				}
				xs := make([]byte, 0, 4*len(x))
				for range 4 {
					xs = append(xs, x...)
				}
				var out [4]float32
				k.Dot4(w, xs, &out)
				for i, got := range out {
					if !sameBits(got, want) {
						t.Errorf("%s %s: Kernel.Dot4 token %d %g, level kernel %g", lvl, td.wt, i, got, want)
					}
				}
			}()
		}
	}
}

// TestVecDotF32MatchesGenericTwin: the float32-slice form at every level,
// odd lengths and huge values included.
func TestVecDotF32MatchesGenericTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, lvl := range Levels() {
		for _, n := range []int{0, 1, 31, 32, 33, 64, 95, 1000, 4096 + 7} {
			for rep := 0; rep < 10; rep++ {
				a, b := make([]float32, n), make([]float32, n)
				for i := range a {
					a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
					if rep == 9 {
						a[i] *= 1e19
						b[i] *= 1e19
					}
				}
				want := dotF32Generic(a, b)
				got := levels[lvl].dotF32(a, b)
				if !sameBits(got, want) {
					t.Fatalf("%s n=%d rep %d: %g, generic %g", lvl, n, rep, got, want)
				}
				func() {
					defer ForceLevel(lvl)()
					if got := VecDotF32(a, b); !sameBits(got, want) {
						t.Fatalf("%s n=%d rep %d: VecDotF32 %g, generic %g", lvl, n, rep, got, want)
					}
				}()
			}
		}
	}
}

// TestBF16DotRoundsProducts: a BF16 product can leave float32's range, and
// the twin rounds it before adding (like the reference's separate multiply
// and add): lane 0 holds −1.7e38, then adds 2^64·2^64, which overflows as a
// product (+Inf) though the fused sum would be finite. Every level agrees.
func TestBF16DotRoundsProducts(t *testing.T) {
	const n = 64
	w, x := make([]byte, 2*n), make([]byte, 2*n)
	put16(w, F32ToBF16(-1.7e38))
	put16(x, F32ToBF16(1))
	put16(w[64:], F32ToBF16(0x1p64))
	put16(x[64:], F32ToBF16(0x1p64))
	for _, lvl := range Levels() {
		if got := levels[lvl].dotBF16(w, x); !math.IsInf(float64(got), 1) {
			t.Errorf("%s: %g, want +Inf (the product rounded on its own)", lvl, got)
		}
	}
}

// BenchmarkBreadthDot4 measures Kernel.Dot4 (one weight row, four tokens)
// of the types with the breadth four-token forms, per level; MB/s counts the weight
// row once per call.
func BenchmarkBreadthDot4(b *testing.B) {
	r := rand.New(rand.NewPCG(41, 42))
	const n = 4096
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1, gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ5_K} {
		w := quantizeWeights(b, typ, gaussian(r, n, 0.02))
		var xs []byte
		for range 4 {
			xs = append(xs, quantizeRow(b, VecDotType(typ), gaussian(r, n, 1))...)
		}
		for _, lvl := range Levels() {
			restore := ForceLevel(lvl)
			k, err := NewKernel(typ, n)
			restore()
			if err != nil {
				b.Fatal(err)
			}
			var out [4]float32
			b.Run(lvl.String()+"/"+typ.String(), func(b *testing.B) {
				b.SetBytes(int64(k.WeightRowBytes()))
				for b.Loop() {
					k.Dot4(w, xs, &out)
				}
			})
		}
	}
}

// TestDotF16F32MatchesGenericTwin: the F16 × F32 row (and its four-row
// form) at every level gives the generic bits, for one to many lane groups, extreme halves and large
// activations.
func TestDotF16F32MatchesGenericTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	gen := genericKernels()
	for _, lvl := range Levels() {
		for _, n := range []int{0, 16, 32, 48, 160, 1024, 4096} {
			for rep := 0; rep < 10; rep++ {
				h := halfRow(r, n, rep)
				w := make([]byte, 2*n)
				for i, v := range h {
					put16(w[2*i:], v)
				}
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(r.NormFloat64())
					if rep == 9 {
						x[i] *= 1e34
					}
				}
				want := gen.dotF16F32(w, x)
				if got := levels[lvl].dotF16F32(w, x); !sameBits(got, want) {
					t.Fatalf("%s n=%d rep %d: %g, generic %g", lvl, n, rep, got, want)
				}
				func() {
					defer ForceLevel(lvl)()
					if got := DotF16F32(w, x); !sameBits(got, want) {
						t.Fatalf("%s n=%d rep %d: DotF16F32 %g, generic %g", lvl, n, rep, got, want)
					}
					// Four rows at a stride with a gap, row 2 being x.
					stride := n + 5
					xs := make([]float32, 3*stride+n)
					for i := range xs {
						xs[i] = float32(r.NormFloat64())
					}
					copy(xs[2*stride:], x)
					var out [4]float32
					DotF16F32x4(w, xs, stride, &out)
					for k := range out {
						if want := gen.dotF16F32(w, xs[k*stride:k*stride+n]); !sameBits(out[k], want) {
							t.Fatalf("%s n=%d rep %d: DotF16F32x4 row %d %g, generic %g", lvl, n, rep, k, out[k], want)
						}
					}
				}()
			}
		}
	}
}

func BenchmarkDotF16F32(b *testing.B) {
	r := rand.New(rand.NewPCG(73, 74))
	const n = 4096
	w := make([]byte, 2*n)
	x := make([]float32, n)
	for i := range x {
		put16(w[2*i:], F32ToF16(float32(r.NormFloat64())))
		x[i] = float32(r.NormFloat64())
	}
	xs := make([]float32, 4*n)
	for i := range xs {
		xs[i] = float32(r.NormFloat64())
	}
	var out [4]float32
	for _, lvl := range Levels() {
		b.Run(lvl.String(), func(b *testing.B) {
			defer ForceLevel(lvl)()
			b.SetBytes(2 * n)
			for b.Loop() {
				_ = DotF16F32(w, x)
			}
		})
		b.Run(lvl.String()+"/x4", func(b *testing.B) {
			defer ForceLevel(lvl)()
			b.SetBytes(2 * n)
			for b.Loop() {
				DotF16F32x4(w, xs, n, &out)
			}
		})
	}
}
