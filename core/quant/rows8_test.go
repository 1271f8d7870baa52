package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TestRows8MatchGeneric: the eight-row Q4_0 decode kernel gives each row
// the one-row generic bits, on random and edge rows, rows not adjacent,
// at every level; Kernel.Dot8RowsT on adjacent rows gives the same.
func TestRows8MatchGeneric(t *testing.T) {
	gen := genericKernels()
	typ := gguf.TypeQ4_0
	for _, lvl := range Levels() {
		ks := levels[lvl]
		for _, n := range twinSizes(typ) {
			for kind := edgeRandom; kind <= edgeMixed; kind++ {
				r := rand.New(rand.NewPCG(uint64(n)+17, uint64(kind)))
				for rep := 0; rep < 8; rep++ {
					var ws [8][]byte
					var x []byte
					for i := range ws {
						ws[i], x = twinRows(t, r, typ, n, kind)
					}
					rb := len(ws[0])
					stride := rb + 18*5
					buf := make([]byte, 7*stride+rb)
					for i := range ws {
						copy(buf[i*stride:], ws[i])
					}
					tab := make([]byte, n/qk*token1Q8_0)
					for b := 0; b < n/qk; b++ {
						d, s8 := q8_0Facts(x[b*bytesQ80 : (b+1)*bytesQ80])
						putF32(tab[b*token1Q8_0:], d)
						tab[b*token1Q8_0+4], tab[b*token1Q8_0+5], tab[b*token1Q8_0+6], tab[b*token1Q8_0+7] = byte(s8), byte(s8>>8), byte(s8>>16), byte(s8>>24)
					}
					var out [8]float32
					ks.dotR8TQ4_0Q8_0(buf, stride, x, tab, &out)
					for i := range ws {
						if want := gen.dotQ4_0Q8_0(ws[i], x); !sameBits(out[i], want) {
							t.Fatalf("%s n=%d kind %d rep %d row %d: %g, generic %g", lvl, n, kind, rep, i, out[i], want)
						}
					}
					if n == 0 {
						continue
					}
					func() {
						defer ForceLevel(lvl)()
						k, err := NewKernel(typ, n)
						if err != nil {
							t.Fatal(err)
						}
						tb := make([]byte, k.Token1TableBytes())
						k.PrepareToken1(x, tb)
						var w8 []byte
						for i := range ws {
							w8 = append(w8, ws[i]...)
						}
						var o2 [8]float32
						k.Dot8RowsT(w8, x, tb, &o2)
						for i := range o2 {
							if !sameBits(o2[i], out[i]) {
								t.Fatalf("%s n=%d: Dot8RowsT row %d = %g, strided kernel %g", lvl, n, i, o2[i], out[i])
							}
						}
					}()
				}
			}
		}
	}
}

// BenchmarkRows8 measures eight Q4_0 rows against one token (n = 4096) per
// level; MB/s counts the weight bytes.
func BenchmarkRows8(b *testing.B) {
	r := rand.New(rand.NewPCG(51, 52))
	const n = 4096
	for _, lvl := range Levels() {
		restore := ForceLevel(lvl)
		k, err := NewKernel(gguf.TypeQ4_0, n)
		restore()
		if err != nil {
			b.Fatal(err)
		}
		var w []byte
		for i := 0; i < 8; i++ {
			w = append(w, quantizeWeights(b, gguf.TypeQ4_0, gaussian(r, n, 0.02))...)
		}
		x := quantizeRow(b, gguf.TypeQ8_0, gaussian(r, n, 1))
		tab := make([]byte, k.Token1TableBytes())
		k.PrepareToken1(x, tab)
		var out [8]float32
		b.Run(lvl.String(), func(b *testing.B) {
			b.SetBytes(int64(8 * k.WeightRowBytes()))
			for b.Loop() {
				k.Dot8RowsT(w, x, tab, &out)
			}
		})
	}
}
