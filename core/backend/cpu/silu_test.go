package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/core/quant"
)

// TestSiluRowsMatchScalar: siluRow16 and swigluRow16 (assembly at the AVX2
// level) give, element by element, x/(1+expf16(−x)) over the full blocks of
// 16 and x/(1+expf(−x)) past them (times u for SwiGLU), for rows of every
// length class and arguments inside and beyond the assembly's exp range,
// infinities and NaN, at every level.
func TestSiluRowsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	same := func(a, b float32) bool {
		return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
	}
	for _, lvl := range quant.Levels() {
		func() {
			defer quant.ForceLevel(lvl)()
			for rep := 0; rep < 400; rep++ {
				n := []int{0, 1, 8, 15, 16, 17, 31, 32, 48, 100, 256}[rep%11]
				x, u := make([]float32, n), make([]float32, n)
				for i := range x {
					x[i] = float32(r.NormFloat64() * 3)
					u[i] = float32(r.NormFloat64())
					if rep%3 == 2 && r.IntN(12) == 0 {
						x[i] = []float32{90, -90, 150, -150, 300, -300, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0, 1e-40}[r.IntN(11)]
					}
				}
				got, gotG := make([]float32, n), make([]float32, n)
				siluRow16(got, x)
				swigluRow16(gotG, x, u)
				n16 := n &^ 15
				for i, v := range x {
					var want float32
					if i < n16 {
						want = v / (1 + expf16(-v))
					} else {
						want = v / (1 + expfLibm(-v))
					}
					if !same(got[i], want) {
						t.Fatalf("%s n=%d: silu(%g) = %g, want %g", lvl, n, v, got[i], want)
					}
					if wantG := want * u[i]; !same(gotG[i], wantG) {
						t.Fatalf("%s n=%d: swiglu(%g, %g) = %g, want %g", lvl, n, v, u[i], gotG[i], wantG)
					}
				}
			}
		}()
	}
}

func BenchmarkSwiglu(b *testing.B) {
	r := rand.New(rand.NewPCG(63, 64))
	const n = 8192
	g, u, out := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range g {
		g[i], u[i] = float32(r.NormFloat64()*3), float32(r.NormFloat64())
	}
	for _, lvl := range quant.Levels() {
		b.Run(lvl.String(), func(b *testing.B) {
			defer quant.ForceLevel(lvl)()
			for b.Loop() {
				swigluRow16(out, g, u)
			}
		})
	}
}
