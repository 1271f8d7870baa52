package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestKernelMatchesVecDot: the resolved Kernel gives VecDot's bits, and
// Dot4 gives Dot's for each of its four rows, for every weight type at
// every level.
func TestKernelMatchesVecDot(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, lvl := range Levels() {
		for _, typ := range weightTypes {
			n := 512
			t.Run(fmt.Sprintf("%s/%s", lvl, typ), func(t *testing.T) {
				defer ForceLevel(lvl)()
				k, err := NewKernel(typ, n)
				if err != nil {
					t.Fatal(err)
				}
				w := randomWeightBytes(t, r, typ, n)
				xs := make([]byte, 0, 4*k.ActRowBytes())
				for i := 0; i < 4; i++ {
					xs = append(xs, quantizeRow(t, VecDotType(typ), gaussian(r, n, 1))...)
				}
				var out, rows [4]float32
				w4 := make([]byte, 0, 4*k.WeightRowBytes())
				for i := 0; i < 4; i++ {
					w4 = append(w4, randomWeightBytes(t, r, typ, n)...)
				}
				k.Dot4Rows(w4, xs[:k.ActRowBytes()], &rows)
				for i := range rows {
					wi := w4[i*k.WeightRowBytes() : (i+1)*k.WeightRowBytes()]
					if want := VecDot(typ, n, wi, xs[:k.ActRowBytes()]); !sameBits(rows[i], want) {
						t.Errorf("row %d: Dot4Rows %g, VecDot %g", i, rows[i], want)
					}
				}
				k.Dot4(w, xs, &out)
				for i := range out {
					x := xs[i*k.ActRowBytes() : (i+1)*k.ActRowBytes()]
					want := VecDot(typ, n, w, x)
					if got := k.Dot(w, x); !sameBits(got, want) {
						t.Errorf("row %d: Dot %g, VecDot %g", i, got, want)
					}
					if !sameBits(out[i], want) {
						t.Errorf("row %d: Dot4 %g, VecDot %g", i, out[i], want)
					}
				}
			})
		}
	}
	if _, err := NewKernel(weightTypes[3], 33); err == nil {
		t.Error("NewKernel accepted a row that is not whole blocks")
	}
}
