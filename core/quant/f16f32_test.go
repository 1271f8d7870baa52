package quant

import (
	"math"
	"math/rand"
	"testing"
)

// TestDotF16F32: against a float64 dot of the widened weights and the
// unrounded activations (so the activations are not rounded to F16), and
// bit for bit against the lane order written out.
func TestDotF16F32(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{16, 64, 4096} {
		w := make([]byte, 2*n)
		x := make([]float32, n)
		var want float64
		var lanes [16]float32
		for i := range x {
			h := F32ToF16(float32(r.NormFloat64()))
			put16(w[2*i:], h)
			x[i] = float32(r.NormFloat64())
			want += float64(F16ToF32(h)) * float64(x[i])
			lanes[i%16] = FMA32(F16ToF32(h), x[i], lanes[i%16])
		}
		got := DotF16F32(w, x)
		if e := math.Abs(float64(got)-want) / math.Sqrt(float64(n)); e > 1e-5 {
			t.Errorf("n=%d: %g, float64 %g", n, got, want)
		}
		var s8 [8]float32
		for l := range s8 {
			s8[l] = lanes[8+l] + lanes[l]
		}
		s4 := [4]float32{s8[4] + s8[0], s8[5] + s8[1], s8[6] + s8[2], s8[7] + s8[3]}
		if lane := (s4[0] + s4[2]) + (s4[1] + s4[3]); got != lane {
			t.Errorf("n=%d: %g, lane order gives %g", n, got, lane)
		}
	}
}
