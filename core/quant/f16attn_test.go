package quant

import (
	"math/rand/v2"
	"testing"
)

// TestF16AttentionHelpersMatchGenericTwins: DotF16x64, AxpyF16F64 and
// FoldLanes64 give the generic bits at every level, for lengths with and
// without a part past the SIMD groups, subnormal and extreme halves.
func TestF16AttentionHelpersMatchGenericTwins(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	gen := genericKernels()
	for _, lvl := range Levels() {
		ks := levels[lvl]
		for _, n := range []int{0, 1, 7, 8, 9, 40, 63, 64, 65, 96, 128, 200, 256} {
			for rep := 0; rep < 12; rep++ {
				k := halfRow(r, n, rep)
				q := make([]float32, n)
				for i := range q {
					q[i] = F16ToF32(F32ToF16(float32(r.NormFloat64())))
				}
				n64 := n &^ 63
				if got, want := ks.dotF16x64(q[:n64], k[:n64]), gen.dotF16x64(q[:n64], k[:n64]); !sameBits(got, want) {
					t.Fatalf("%s n=%d rep %d: dotF16x64 %g, generic %g", lvl, n, rep, got, want)
				}
				func() {
					defer ForceLevel(lvl)()
					if got, want := DotF16x64(q, k), gen.dotF16x64(q[:n64], k[:n64]); !sameBits(got, want) {
						t.Fatalf("%s n=%d rep %d: DotF16x64 %g, generic %g", lvl, n, rep, got, want)
					}
				}()

				a := F16ToF32(F32ToF16(float32(r.NormFloat64())))
				acc := make([]float64, n)
				for i := range acc {
					acc[i] = r.NormFloat64()
				}
				want := append([]float64(nil), acc...)
				gen.axpyF16F64(want, a, k)
				ks.axpyF16F64(acc, a, k)
				for i := range acc {
					if acc[i] != want[i] && !(acc[i] != acc[i] && want[i] != want[i]) {
						t.Fatalf("%s n=%d rep %d: axpyF16F64[%d] = %g, generic %g", lvl, n, rep, i, acc[i], want[i])
					}
				}

				lanes := make([]float32, 64*n)
				for i := range lanes {
					lanes[i] = float32(r.NormFloat64())
					if rep%6 == 5 && i%5 == 0 {
						lanes[i] *= 1e30
					}
				}
				tail := make([]float64, n)
				for i := range tail {
					tail[i] = r.NormFloat64() * 1e-3
				}
				got, wantF := make([]float32, n), make([]float32, n)
				gen.foldLanes64(wantF, lanes, tail)
				ks.foldLanes64(got, lanes, tail)
				for j := range got {
					if !sameBits(got[j], wantF[j]) {
						t.Fatalf("%s n=%d rep %d: foldLanes64[%d] = %g, generic %g", lvl, n, rep, j, got[j], wantF[j])
					}
				}
			}
		}
	}
}
