package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/core/quant"
)

// TestExpf16LanesMatchesExpf16: the lane form (assembly at the AVX2 level)
// gives expf16's bits for every input class: softmax-like negatives, SiLU
// arguments, values around the ±126·ln2 edge of the assembly's range and
// past ±192·ln2, infinities, NaN, zeros and subnormals.
func TestExpf16LanesMatchesExpf16(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, lvl := range quant.Levels() {
		func() {
			defer quant.ForceLevel(lvl)()
			for rep := 0; rep < 4000; rep++ {
				n := 1 + r.IntN(40)
				src := make([]float32, n)
				for i := range src {
					switch r.IntN(8) {
					case 0:
						src[i] = -float32(r.ExpFloat64() * 10)
					case 1:
						src[i] = float32(r.NormFloat64() * 4)
					case 2:
						src[i] = float32((r.Float64()*2 - 1) * 140) // across ±126·ln2 ≈ ±87.3
					case 3:
						src[i] = float32((r.Float64()*2 - 1) * 200)
					case 4:
						src[i] = []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0, float32(math.Copysign(0, -1)), 1e-40, -1e-40, 87.33655, -87.33655, 88.72284, -103.27893}[r.IntN(11)]
					default:
						src[i] = float32(r.NormFloat64())
					}
				}
				dst := make([]float32, n)
				expf16Lanes(dst, src)
				for i, x := range src {
					want := expf16(x)
					if math.Float32bits(dst[i]) != math.Float32bits(want) && !(dst[i] != dst[i] && want != want) {
						t.Fatalf("%s: expf16Lanes(%g) = %g (%#x), expf16 %g (%#x)", lvl, x, dst[i], math.Float32bits(dst[i]), want, math.Float32bits(want))
					}
				}
			}
		}()
	}
}
