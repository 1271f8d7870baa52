package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/core/quant"
)

// BenchmarkSoftmaxMasked: softmaxSum16 over a row of 256 scores whose
// second half is masked (−Inf), as causal prefill rows are.
func BenchmarkSoftmaxMasked(b *testing.B) {
	r := rand.New(rand.NewPCG(91, 92))
	const n = 256
	src := make([]float32, n)
	for i := range src {
		src[i] = -float32(r.ExpFloat64() * 4)
		if i >= n/2 {
			src[i] = float32(math.Inf(-1))
		}
	}
	row := make([]float32, n)
	for _, lvl := range quant.Levels() {
		b.Run(lvl.String(), func(b *testing.B) {
			defer quant.ForceLevel(lvl)()
			for b.Loop() {
				copy(row, src)
				_ = softmaxSum16(row)
			}
		})
	}
}
