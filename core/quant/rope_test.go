package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRopeMatchesGenericTwins: both rope modes at every level give the
// generic bits, for dims with and without a tail past the SIMD groups,
// in place and into another slice, with large and special values mixed in.
func TestRopeMatchesGenericTwins(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	gen := genericKernels()
	type mode struct {
		name string
		f    func(*kernelSet) func(out, x, cs []float32)
	}
	modes := []mode{
		{"pairs", func(k *kernelSet) func(out, x, cs []float32) { return k.ropePairs }},
		{"halves", func(k *kernelSet) func(out, x, cs []float32) { return k.ropeHalves }},
	}
	for _, lvl := range Levels() {
		for _, m := range modes {
			for _, dims := range []int{0, 2, 6, 8, 14, 16, 18, 24, 32, 34, 64, 80, 128, 256} {
				for rep := 0; rep < 12; rep++ {
					x := make([]float32, dims+3) // the part past dims is left alone
					cs := make([]float32, dims)
					for i := range x {
						x[i] = float32(r.NormFloat64() * 4)
						if rep%4 == 3 && r.IntN(8) == 0 {
							x[i] = []float32{0, float32(math.Copysign(0, -1)), 3e38, -3e38, float32(math.Inf(1)), float32(math.NaN()), 1e-40}[r.IntN(7)]
						}
					}
					for i := 0; i+1 < dims; i += 2 {
						th := r.Float64() * 2 * math.Pi * 100
						cs[i], cs[i+1] = float32(math.Cos(th)), float32(math.Sin(th))
					}
					want := make([]float32, len(x))
					got := make([]float32, len(x))
					m.f(gen)(want, x, cs)
					m.f(levels[lvl])(got, x, cs)
					inPlace := append([]float32(nil), x...)
					m.f(levels[lvl])(inPlace, inPlace, cs)
					for i := 0; i < dims; i++ {
						if !sameBits(got[i], want[i]) || !sameBits(inPlace[i], want[i]) {
							t.Fatalf("%s %s dims=%d rep %d: [%d] = %g (in place %g), generic %g", lvl, m.name, dims, rep, i, got[i], inPlace[i], want[i])
						}
					}
					for i := dims; i < len(x); i++ {
						if got[i] != 0 || !sameBits(inPlace[i], x[i]) {
							t.Fatalf("%s %s dims=%d: element %d past dims written", lvl, m.name, dims, i)
						}
					}
				}
			}
		}
	}
}

// TestRopeExported: RopePairs and RopeHalves run the active level's kernel
// and the generic one when forced, with the same bits.
func TestRopeExported(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	x := make([]float32, 128)
	cs := make([]float32, 64)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for i := range cs {
		cs[i] = float32(r.Float64()*2 - 1)
	}
	for _, f := range []func(out, x, cs []float32){RopePairs, RopeHalves} {
		want := make([]float32, 128)
		func() {
			defer ForceLevel(Generic)()
			f(want, x, cs)
		}()
		for _, lvl := range Levels() {
			got := make([]float32, 128)
			func() {
				defer ForceLevel(lvl)()
				f(got, x, cs)
			}()
			for i := range got {
				if !sameBits(got[i], want[i]) {
					t.Fatalf("%s: [%d] = %g, generic %g", lvl, i, got[i], want[i])
				}
			}
		}
	}
}

func BenchmarkRope(b *testing.B) {
	r := rand.New(rand.NewPCG(55, 56))
	const dims = 128
	x := make([]float32, dims)
	out := make([]float32, dims)
	cs := make([]float32, dims)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		cs[i] = float32(r.Float64())
	}
	for _, lvl := range Levels() {
		for _, m := range []struct {
			name string
			f    func(out, x, cs []float32)
		}{{"pairs", RopePairs}, {"halves", RopeHalves}} {
			b.Run(lvl.String()+"/"+m.name, func(b *testing.B) {
				defer ForceLevel(lvl)()
				for b.Loop() {
					m.f(out, x, cs)
				}
			})
		}
	}
}
