package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
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

// TestDot4TMatchesGeneric: the table-taking four-token kernel gives each
// token the one-token generic bits, on random and edge rows, at every level.
func TestDot4TMatchesGeneric(t *testing.T) {
	gen := genericKernels()
	for _, lvl := range Levels() {
		for _, n := range []int{32, 64, 96, 32 * 37} {
			for kind := edgeRandom; kind <= edgeMixed; kind++ {
				func() {
					defer ForceLevel(lvl)()
					typ := weightTypes[3] // Q4_0
					k, err := NewKernel(typ, n)
					if err != nil {
						t.Fatal(err)
					}
					r := rand.New(rand.NewPCG(uint64(n)+99, uint64(kind)))
					for rep := 0; rep < 8; rep++ {
						w, _ := twinRows(t, r, typ, n, kind)
						xs := make([]byte, 0, 4*k.ActRowBytes())
						for i := 0; i < 4; i++ {
							_, x := twinRows(t, r, typ, n, kind)
							xs = append(xs, x...)
						}
						w4 := make([]byte, 0, 4*len(w))
						for i := 0; i < 4; i++ {
							wi, _ := twinRows(t, r, typ, n, kind)
							w4 = append(w4, wi...)
						}
						tab1 := make([]byte, k.Token1TableBytes())
						k.PrepareToken1(xs, tab1)
						var rows [4]float32
						k.Dot4RowsT(w4, xs, tab1, &rows)
						for i := range rows {
							want := gen.dotQ4_0Q8_0(w4[i*len(w):(i+1)*len(w)], xs[:k.ActRowBytes()])
							if !sameBits(rows[i], want) {
								t.Fatalf("%s n=%d kind %d rep %d row %d: Dot4RowsT %g, generic %g", lvl, n, kind, rep, i, rows[i], want)
							}
						}
						tab := make([]byte, k.Group4TableBytes())
						k.PrepareGroup4(xs, tab)
						var out [4]float32
						k.Dot4T(w, xs, tab, &out)
						for i := range out {
							want := gen.dotQ4_0Q8_0(w, xs[i*k.ActRowBytes():(i+1)*k.ActRowBytes()])
							if !sameBits(out[i], want) {
								t.Fatalf("%s n=%d kind %d rep %d token %d: %g, generic %g", lvl, n, kind, rep, i, out[i], want)
							}
						}
					}
				}()
			}
		}
	}
}

// BenchmarkKernel measures one weight row against four tokens (Dot4, and
// Dot4T where the type has a group table) and four rows against one token
// (Dot4Rows, and the same rows by Dot one at a time), per level; MB/s
// counts weight bytes once per call.
func BenchmarkKernel(b *testing.B) {
	r := rand.New(rand.NewPCG(31, 32))
	const n = 4096
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		for _, lvl := range Levels() {
			restore := ForceLevel(lvl)
			k, err := NewKernel(typ, n)
			restore()
			if err != nil {
				b.Fatal(err)
			}
			w := make([]byte, 0, 4*k.WeightRowBytes())
			xs := make([]byte, 0, 4*k.ActRowBytes())
			for i := 0; i < 4; i++ {
				w = append(w, quantizeWeights(b, typ, gaussian(r, n, 0.02))...)
				xs = append(xs, quantizeRow(b, VecDotType(typ), gaussian(r, n, 1))...)
			}
			var out [4]float32
			b.Run(lvl.String()+"/"+typ.String()+"/Dot4", func(b *testing.B) {
				b.SetBytes(int64(k.WeightRowBytes()))
				for b.Loop() {
					k.Dot4(w, xs, &out)
				}
			})
			if tb := k.Group4TableBytes(); tb > 0 {
				tab := make([]byte, tb)
				k.PrepareGroup4(xs, tab)
				b.Run(lvl.String()+"/"+typ.String()+"/Dot4T", func(b *testing.B) {
					b.SetBytes(int64(k.WeightRowBytes()))
					for b.Loop() {
						k.Dot4T(w, xs, tab, &out)
					}
				})
			}
			if tb := k.Token1TableBytes(); tb > 0 {
				tab := make([]byte, tb)
				k.PrepareToken1(xs, tab)
				b.Run(lvl.String()+"/"+typ.String()+"/Dot4RowsT", func(b *testing.B) {
					b.SetBytes(int64(4 * k.WeightRowBytes()))
					for b.Loop() {
						k.Dot4RowsT(w, xs, tab, &out)
					}
				})
			}
			b.Run(lvl.String()+"/"+typ.String()+"/Dot4Rows", func(b *testing.B) {
				b.SetBytes(int64(4 * k.WeightRowBytes()))
				for b.Loop() {
					k.Dot4Rows(w, xs, &out)
				}
			})
			// The same four rows one at a time (the one-row kernel).
			b.Run(lvl.String()+"/"+typ.String()+"/Dot×4", func(b *testing.B) {
				b.SetBytes(int64(4 * k.WeightRowBytes()))
				wrb := k.WeightRowBytes()
				for b.Loop() {
					for i := range out {
						out[i] = k.Dot(w[i*wrb:(i+1)*wrb], xs)
					}
				}
			})
		}
	}
}
