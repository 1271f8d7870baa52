package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkRMSNorm: one row of rms_norm (the sum of squares, the mean's
// float32, the scale and the scaled row) at the hidden sizes of the small
// models, on a one-worker CPU backend.
func BenchmarkRMSNorm(b *testing.B) {
	r := rand.New(rand.NewPCG(71, 72))
	for _, n := range []int{2048, 4096} {
		x, out := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c := New(1)
			defer c.Close()
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				c.rmsNorm(out, x, n, 1e-5)
			}
		})
	}
}
