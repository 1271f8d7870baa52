package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// breadthDots are the one-token dots of the remaining weight types, checked
// like twinDots: same bits as the generic body at every level, on random
// rows, zero blocks, max-magnitude scales and mixed rows, at odd lengths.
var breadthDots = []struct {
	wt  gguf.GGMLType
	one func(*kernelSet) func(w, x []byte) float32
}{
	{gguf.TypeQ4_1, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ4_1Q8_1 }},
	{gguf.TypeQ5_0, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ5_0Q8_0 }},
	{gguf.TypeQ5_1, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ5_1Q8_1 }},
	{gguf.TypeQ2_K, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ2_KQ8_K }},
	{gguf.TypeQ3_K, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ3_KQ8_K }},
	{gguf.TypeQ5_K, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ5_KQ8_K }},
	{gguf.TypeF32, func(k *kernelSet) func(w, x []byte) float32 { return k.dotF32Bytes }},
	{gguf.TypeBF16, func(k *kernelSet) func(w, x []byte) float32 { return k.dotBF16 }},
}

func TestBreadthKernelsMatchGenericTwins(t *testing.T) {
	gen := genericKernels()
	for _, lvl := range Levels() {
		ks := levels[lvl]
		for _, td := range breadthDots {
			for _, n := range twinSizes(td.wt) {
				for kind := edgeRandom; kind <= edgeMixed; kind++ {
					t.Run(fmt.Sprintf("%s/%s/n=%d/kind=%d", lvl, td.wt, n, kind), func(t *testing.T) {
						r := rand.New(rand.NewPCG(uint64(n)+1000, uint64(kind)))
						for rep := 0; rep < 8; rep++ {
							w, x := twinRows(t, r, td.wt, n, kind)
							want := td.one(gen)(w, x)
							if got := td.one(ks)(w, x); !sameBits(got, want) {
								t.Fatalf("rep %d: %s = %g (%#08x), generic %g (%#08x)", rep, lvl, got, math.Float32bits(got), want, math.Float32bits(want))
							}
						}
					})
				}
			}
		}
	}
}

// TestBreadthKernelsReachVecDot: VecDot and NewKernel use the active
// level's kernel for every type (a level forced to Generic gives the
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
