package quant

import (
	"math/rand/v2"
	"testing"
)

func TestZZProbe(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	x := make([]float32, 256*64)
	for i := range x { x[i] = float32(r.NormFloat64()*0.02) }
	xo := gaussian(r, 256*64, 0.02)
	for _, typ := range weightTypes {
		b := quantizeWeights(t, typ, x)
		bo := quantizeWeights(t, typ, xo)
		t.Logf("%s nmse gauss=%.3g outliers=%.3g", typ, nmse(dequantize(t, typ, b, len(x)), x), nmse(dequantize(t, typ, bo, len(x)), xo))
	}
}
