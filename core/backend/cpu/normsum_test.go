package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/internal/normtie"
)

// normRow is a test row of length n of one of the magnitude classes.
func normRow(r *rand.Rand, n, class int) []float32 {
	x := make([]float32, n)
	for i := range x {
		g := r.NormFloat64()
		switch class {
		case 0: // activations
			x[i] = float32(g)
		case 1: // huge: squares near float32's top, some overflowing to +Inf
			x[i] = float32(g * 1e18)
		case 2: // tiny: squares denormal or zero
			x[i] = float32(g * 1e-21)
		case 3: // denormal elements
			x[i] = math.Float32frombits(uint32(r.IntN(1 << 23)))
			if r.IntN(2) == 0 {
				x[i] = -x[i]
			}
		case 4: // mixed: every exponent
			x[i] = float32(g * math.Pow(2, float64(r.IntN(120)-60)))
		case 5: // zeros with a few values
			if r.IntN(8) == 0 {
				x[i] = float32(g)
			}
		case 6: // specials
			x[i] = []float32{0, float32(math.Copysign(0, -1)), 1, -3, float32(math.Inf(1)), float32(math.NaN()), 1e20}[r.IntN(7)]
		}
	}
	return x
}

const normClasses = 7

func sameF32(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

func sameF64(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b)
}

var normLengths = []int{0, 1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 63, 100, 255, 256, 257, 1000, 2048, 4095}

// TestSumSquaresLanesMatchesTwin: the sum in lanes (assembly at the AVX2
// level) is bit-identical to sumSquaresLanesGo, and scaleRow to the
// element-wise product, for rows of every length class and magnitude
// class, at every level.
func TestSumSquaresLanesMatchesTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	for _, lvl := range quant.Levels() {
		func() {
			defer quant.ForceLevel(lvl)()
			for rep := 0; rep < 40; rep++ {
				for _, n := range normLengths {
					for class := 0; class < normClasses; class++ {
						x := normRow(r, n, class)
						if got, want := sumSquaresLanes(x), sumSquaresLanesGo(x); !sameF64(got, want) {
							t.Fatalf("%s n=%d class %d: lanes %x, twin %x", lvl, n, class, math.Float64bits(got), math.Float64bits(want))
						}
						s := float32(r.NormFloat64())
						out := make([]float32, n)
						scaleRow(out, x, s)
						for i, v := range x {
							if !sameF32(out[i], v*s) {
								t.Fatalf("%s n=%d: scale %g·%g = %g", lvl, n, v, s, out[i])
							}
						}
					}
				}
			}
		}()
	}
}

// TestMeanSquaresIsTheSerialChain: the mean of every row above equals the
// serial chain's bit for bit, at every level.
func TestMeanSquaresIsTheSerialChain(t *testing.T) {
	r := rand.New(rand.NewPCG(75, 76))
	for _, lvl := range quant.Levels() {
		func() {
			defer quant.ForceLevel(lvl)()
			for rep := 0; rep < 40; rep++ {
				for _, n := range normLengths[1:] {
					for class := 0; class < normClasses; class++ {
						x := normRow(r, n, class)
						if got, want := meanSquares(x), meanSquaresSerial(x); !sameF32(got, want) {
							t.Fatalf("%s n=%d class %d: mean %g, serial %g", lvl, n, class, got, want)
						}
					}
				}
			}
		}()
	}
}

// TestMeanSquaresFallback: rows whose mean sits on a float32 tie fail the
// check, take the serial chain and still give its mean — and for them
// the lanes' sum alone would have given another float32, so the check is
// what keeps the results identical.
func TestMeanSquaresFallback(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 78))
	for _, lvl := range quant.Levels() {
		func() {
			defer quant.ForceLevel(lvl)()
			differ := 0
			for rep := 0; rep < 200; rep++ {
				p := 4 + rep%10
				shuffle := rep%2 == 1
				x := normtie.Row(r, p, 1e-5, shuffle)
				want := meanSquaresSerial(x)
				before := serialMeans.Load()
				if got := meanSquares(x); !sameF32(got, want) {
					t.Fatalf("%s p=%d shuffle %v: mean %g, serial %g", lvl, p, shuffle, got, want)
				}
				if serialMeans.Load() == before {
					t.Fatalf("%s p=%d shuffle %v: a tie row passed the check", lvl, p, shuffle)
				}
				lanes := float32(sumSquaresLanes(x) / float64(len(x)))
				if lanes != want {
					differ++
				}
				if !shuffle && lanes != math.Nextafter32(want, 4) {
					t.Fatalf("%s p=%d: the tie row's serial mean %g, lanes' %g (want the next float32)", lvl, p, want, lanes)
				}
			}
			if differ == 0 {
				t.Fatalf("%s: no tie row where the lanes alone differ from the serial chain", lvl)
			}
		}()
	}
}

// TestRMSNormMatchesSerial: the rms_norm op on rows of the classes above
// and on tie rows is the serial chain's mean, scale and products.
func TestRMSNormMatchesSerial(t *testing.T) {
	r := rand.New(rand.NewPCG(79, 80))
	c := New(2)
	defer c.Close()
	const eps = 1e-6
	for _, lvl := range quant.Levels() {
		func() {
			defer quant.ForceLevel(lvl)()
			for _, n := range []int{16, 64, 100, 256} {
				rows := 9
				x := make([]float32, 0, rows*n)
				for class := 0; class < normClasses; class++ {
					x = append(x, normRow(r, n, class)...)
				}
				if n == 64 || n == 256 {
					x = append(x, normtie.Row(r, int(math.Log2(float64(n))), eps, false)...)
				} else {
					x = append(x, normRow(r, n, 0)...)
				}
				x = append(x, normRow(r, n, 4)...)
				out := make([]float32, len(x))
				c.rmsNorm(out, x, n, eps)
				for row := 0; row < rows; row++ {
					xr := x[row*n : (row+1)*n]
					scale := 1 / float32(math.Sqrt(float64(meanSquaresSerial(xr)+eps)))
					for i, v := range xr {
						if want := v * scale; !sameF32(out[row*n+i], want) {
							t.Fatalf("%s n=%d row %d [%d]: %g, want %g", lvl, n, row, i, out[row*n+i], want)
						}
					}
				}
			}
		}()
	}
}
