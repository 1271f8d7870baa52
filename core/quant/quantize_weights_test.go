package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// Round-trip NMSE bounds of QuantizeWeights → Dequantize on normal(0, 0.02)
// weights (the synth models' distribution), about 1.3× what the reference
// algorithms measure (in parentheses). With 1-in-64 values ×8 outliers the
// block-scaled formats lose up to ~3× (Q4_0 worst), bounded separately.
var weightNMSEBound = map[gguf.GGMLType]struct{ gauss, outliers float64 }{
	gguf.TypeF32:  {0, 0},
	gguf.TypeF16:  {1e-7, 1e-7},      // (4.4e-8) half rounding
	gguf.TypeBF16: {4e-6, 4e-6},      // (2.8e-6)
	gguf.TypeQ8_0: {4e-5, 1.1e-4},    // (2.9e-5, 8.3e-5)
	gguf.TypeQ6_K: {4.2e-4, 9e-4},    // (3.2e-4, 7.0e-4)
	gguf.TypeQ5_1: {1.9e-3, 3.1e-3},  // (1.4e-3, 2.4e-3)
	gguf.TypeQ5_K: {1.75e-3, 2.9e-3}, // (1.3e-3, 2.3e-3)
	gguf.TypeQ5_0: {2.4e-3, 7e-3},    // (1.8e-3, 5.3e-3)
	gguf.TypeQ4_K: {6.6e-3, 1.2e-2},  // (5.0e-3, 9.0e-3)
	gguf.TypeQ4_1: {8e-3, 1.35e-2},   // (6.0e-3, 1.0e-2)
	gguf.TypeQ4_0: {9.6e-3, 2.7e-2},  // (7.4e-3, 2.1e-2)
	gguf.TypeQ3_K: {2.9e-2, 5.1e-2},  // (2.3e-2, 3.9e-2)
	gguf.TypeQ2_K: {0.113, 0.16},     // (8.7e-2, 0.12)
}

func TestQuantizeWeightsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 17))
	const n = 256 * 64
	plain := make([]float32, n)
	for i := range plain {
		plain[i] = float32(r.NormFloat64() * 0.02)
	}
	withOutliers := gaussian(r, n, 0.02)
	for _, typ := range weightTypes {
		bound, ok := weightNMSEBound[typ]
		if !ok {
			t.Fatalf("no bound for %s", typ)
		}
		for _, data := range []struct {
			name  string
			x     []float32
			bound float64
		}{{"gaussian", plain, bound.gauss}, {"outliers", withOutliers, bound.outliers}} {
			t.Run(fmt.Sprintf("%s/%s", typ, data.name), func(t *testing.T) {
				b := quantizeWeights(t, typ, data.x)
				e := nmse(dequantize(t, typ, b, n), data.x)
				if e > data.bound {
					t.Fatalf("round-trip NMSE %.3g > %.3g", e, data.bound)
				}
			})
		}
	}
}

// TestQuantizeWeightsEdgeRows: degenerate blocks must stay finite and, where
// the format can hold them exactly, come back exactly.
func TestQuantizeWeightsEdgeRows(t *testing.T) {
	const n = 512
	rows := map[string][]float32{
		"zeros":    make([]float32, n),
		"constant": make([]float32, n),
		"negative": make([]float32, n),
		"spike":    make([]float32, n),
		"tiny":     make([]float32, n),
	}
	for i := 0; i < n; i++ {
		rows["constant"][i] = 0.25
		rows["negative"][i] = -0.01 * float32(1+i%7)
		rows["tiny"][i] = float32(math.Ldexp(float64(i%5)-2, -30))
	}
	rows["spike"][3] = 100
	rows["spike"][300] = -0.001
	for _, typ := range weightTypes {
		for name, x := range rows {
			t.Run(fmt.Sprintf("%s/%s", typ, name), func(t *testing.T) {
				y := dequantize(t, typ, quantizeWeights(t, typ, x), n)
				for i, v := range y {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						t.Fatalf("element %d dequantizes to %g", i, v)
					}
				}
				if name == "zeros" {
					for i, v := range y {
						if v != 0 {
							t.Fatalf("zero row: element %d = %g", i, v)
						}
					}
				}
				if name == "spike" {
					// The spike itself survives within its block's precision.
					if math.Abs(float64(y[3])-100) > 100*0.07 {
						t.Fatalf("spike 100 came back as %g", y[3])
					}
				}
			})
		}
	}
}
