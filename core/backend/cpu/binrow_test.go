package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/core/quant"
)

// TestBinRowMatchesTwin: binRow (assembly at the AVX2 and AVX512 levels)
// gives binRowGo's bits for the add and the multiply, for rows of every
// length class and magnitude class (normRow's, with infinities, NaNs and
// signed zeros mixed in), in place too, at every level.
func TestBinRowMatchesTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(75, 76))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, math.SmallestNonzeroFloat32}
	for _, lvl := range quant.Levels() {
		func() {
			defer quant.ForceLevel(lvl)()
			for rep := 0; rep < 20; rep++ {
				for _, n := range normLengths {
					for class := 0; class < normClasses; class++ {
						x, y := normRow(r, n, class), normRow(r, n, (class+rep)%normClasses)
						for i := range x {
							if r.IntN(8) == 0 {
								x[i] = specials[r.IntN(len(specials))]
							}
							if r.IntN(8) == 0 {
								y[i] = specials[r.IntN(len(specials))]
							}
						}
						for _, add := range []bool{true, false} {
							want, got := make([]float32, n), make([]float32, n)
							binRowGo(want, x, y, add)
							binRow(got, x, y, add)
							inPlace := append([]float32(nil), x...)
							binRow(inPlace, inPlace, y, add)
							for i := range want {
								if !sameF32(got[i], want[i]) || !sameF32(inPlace[i], want[i]) {
									t.Fatalf("%s n=%d add=%v [%d]: %g op %g = %g (in place %g), twin %g", lvl, n, add, i, x[i], y[i], got[i], inPlace[i], want[i])
								}
							}
						}
					}
				}
			}
		}()
	}
}
