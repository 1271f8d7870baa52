package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestScatter4x8: at every level, Scatter4x8 puts o[8r+t] at dst[t·stride+r] for every
// stride from 4 up (and a row length's), touches nothing else, and moves
// the bits of NaNs, infinities and negative zeros unchanged.
func TestScatter4x8(t *testing.T) {
	for _, lvl := range Levels() {
		func() {
			defer ForceLevel(lvl)()
			testScatter4x8(t, lvl)
		}()
	}
}

func testScatter4x8(t *testing.T, lvl Level) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, stride := range []int{4, 5, 7, 8, 13, 64, 2051} {
		var o [32]float32
		for i := range o {
			o[i] = float32(r.NormFloat64())
		}
		o[3], o[12], o[21], o[30] = float32(math.NaN()), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), math.Float32frombits(0x7fc01234)
		n := 7*stride + 4 + 5
		dst := make([]float32, n)
		want := make([]float32, n)
		for i := range dst {
			dst[i] = float32(i)
			want[i] = float32(i)
		}
		scatter4x8Go(&o, want, stride)
		Scatter4x8(&o, dst, stride)
		for i := range dst {
			if math.Float32bits(dst[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s stride %d: dst[%d] = %#x, want %#x", lvl, stride, i, math.Float32bits(dst[i]), math.Float32bits(want[i]))
			}
		}
		for tok := 0; tok < 8; tok++ {
			for row := 0; row < 4; row++ {
				if math.Float32bits(want[tok*stride+row]) != math.Float32bits(o[8*row+tok]) {
					t.Fatalf("stride %d: reference token %d row %d wrong", stride, tok, row)
				}
			}
		}
	}
}
