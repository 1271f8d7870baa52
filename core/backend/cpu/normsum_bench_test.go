package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/core/quant"
)

// BenchmarkRMSNorm: one row of rms_norm (the sum of squares, the mean's
// float32, the scale and the scaled row) at the hidden sizes of the small
// models, on a one-worker CPU backend, at every level.
func BenchmarkRMSNorm(b *testing.B) {
	r := rand.New(rand.NewPCG(71, 72))
	for _, n := range []int{2048, 4096} {
		x, out := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		for _, lvl := range quant.Levels() {
			b.Run(fmt.Sprintf("%d/%s", n, lvl), func(b *testing.B) {
				defer quant.ForceLevel(lvl)()
				c := New(1)
				defer c.Close()
				b.SetBytes(int64(8 * n))
				for b.Loop() {
					c.rmsNorm(out, x, n, 1e-5)
				}
			})
		}
	}
}

// BenchmarkMeanSquares: the mean alone, the serial chain against the
// lanes with their check, at every level.
func BenchmarkMeanSquares(b *testing.B) {
	r := rand.New(rand.NewPCG(73, 74))
	for _, n := range []int{2048, 4096} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		var sink float32
		b.Run(fmt.Sprintf("%d/serial", n), func(b *testing.B) {
			for b.Loop() {
				sink += meanSquaresSerial(x)
			}
		})
		for _, lvl := range quant.Levels() {
			b.Run(fmt.Sprintf("%d/%s", n, lvl), func(b *testing.B) {
				defer quant.ForceLevel(lvl)()
				for b.Loop() {
					sink += meanSquares(x)
				}
			})
		}
		_ = sink
	}
}
