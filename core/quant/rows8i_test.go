package quant

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TestRows8X8MatchGeneric: Interleave8 and Deinterleave8 are inverse; the
// x8 kernels of every level (Dot8RowsX8, with and without the token
// table, and DotRowX8) give each row the one-row generic bits of the row
// in the file layout, on random and edge rows; for every type with an x8
// layout (rows8i.go, rows8k.go).
func TestRows8X8MatchGeneric(t *testing.T) {
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		if !Interleaves8(typ) {
			t.Fatalf("%s has no x8 layout", typ)
		}
		testRows8X8(t, typ)
	}
}

func testRows8X8(t *testing.T, typ gguf.GGMLType) {
	gen := genericKernels()
	var one func(w, x []byte) float32
	var deint func(dst []byte, wrb int, src []byte)
	switch typ {
	case gguf.TypeQ4_0:
		one, deint = gen.dotQ4_0Q8_0, deinterleave8Q4_0Generic
	case gguf.TypeQ8_0:
		one, deint = gen.dotQ8_0Q8_0, deinterleave8Q8_0Generic
	case gguf.TypeQ4_K, gguf.TypeQ6_K:
		bs, _ := kx8(typ)
		one = gen.dotQ4_KQ8_K
		if typ == gguf.TypeQ6_K {
			one = gen.dotQ6_KQ8_K
		}
		deint = func(dst []byte, wrb int, src []byte) { moveK8(dst, src, wrb/bs, bs, false) }
	}
	for _, lvl := range Levels() {
		for _, n := range twinSizes(typ) {
			if n == 0 {
				continue
			}
			restore := ForceLevel(lvl)
			k, err := NewKernel(typ, n)
			restore()
			if err != nil {
				t.Fatal(err)
			}
			for kind := edgeRandom; kind <= edgeMixed; kind++ {
				r := rand.New(rand.NewPCG(uint64(n)+23, uint64(kind)))
				for rep := 0; rep < 8; rep++ {
					var ws [8][]byte
					var x []byte
					for i := range ws {
						ws[i], x = twinRows(t, r, typ, n, kind)
					}
					var src []byte
					for i := range ws {
						src = append(src, ws[i]...)
					}
					w8 := make([]byte, len(src))
					k.Interleave8(w8, src)
					back := make([]byte, len(src))
					k.Deinterleave8(back, w8)
					if !bytes.Equal(back, src) {
						t.Fatalf("%s %s n=%d: Deinterleave8(Interleave8(w)) != w", typ, lvl, n)
					}
					clear(back)
					deint(back, k.WeightRowBytes(), w8)
					if !bytes.Equal(back, src) {
						t.Fatalf("%s n=%d: the generic Deinterleave8(Interleave8(w)) != w", typ, n)
					}
					if k.HasPrep4X8() {
						// The tile kernels' preparation of each half as it
						// lies: the bytes of Prep4 on its rows in the file.
						pb := k.Prep4Bytes()
						u, want := make([]byte, pb), make([]byte, pb)
						h := 4 * k.WeightRowBytes()
						for half := 0; half < 2; half++ {
							k.Prep4(src[half*h:(half+1)*h], want)
							if !k.Prep4X8(w8, half, u) || !bytes.Equal(u, want) {
								t.Fatalf("%s %s n=%d half %d: Prep4X8 differs from Prep4 on the file rows", typ, lvl, n, half)
							}
						}
					}
					tab := make([]byte, k.Token1TableBytes())
					k.PrepareToken1(x, tab)
					if len(tab) == 0 {
						tab = nil
					}
					var out, outG [8]float32
					k.Dot8RowsX8(w8, x, tab, &out)
					k.Dot8RowsX8(w8, x, nil, &outG)
					for i := range ws {
						want := one(ws[i], x)
						if !sameBits(out[i], want) || !sameBits(outG[i], want) {
							t.Fatalf("%s %s n=%d kind %d rep %d row %d: %g (no table %g), generic %g", typ, lvl, n, kind, rep, i, out[i], outG[i], want)
						}
						if got := k.DotRowX8(w8, i, x); !sameBits(got, want) {
							t.Fatalf("%s %s n=%d row %d: DotRowX8 %g, generic %g", typ, lvl, n, i, got, want)
						}
					}
				}
			}
		}
	}
}

// BenchmarkRows8X8 is BenchmarkRows8 for one x8 group (in cache).
func BenchmarkRows8X8(b *testing.B) {
	r := rand.New(rand.NewPCG(51, 52))
	const n = 4096
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0} {
		for _, lvl := range Levels() {
			restore := ForceLevel(lvl)
			k, err := NewKernel(typ, n)
			restore()
			if err != nil {
				b.Fatal(err)
			}
			var w []byte
			for i := 0; i < 8; i++ {
				w = append(w, quantizeWeights(b, typ, gaussian(r, n, 0.02))...)
			}
			w8 := make([]byte, len(w))
			k.Interleave8(w8, w)
			x := quantizeRow(b, gguf.TypeQ8_0, gaussian(r, n, 1))
			tab := make([]byte, k.Token1TableBytes())
			k.PrepareToken1(x, tab)
			var out [8]float32
			b.Run(typ.String()+"/"+lvl.String(), func(b *testing.B) {
				b.SetBytes(int64(8 * k.WeightRowBytes()))
				for b.Loop() {
					k.Dot8RowsX8(w8, x, tab, &out)
				}
			})
		}
	}
}

// BenchmarkDeinterleave8 measures turning one x8 group (n = 2048) back
// into the file layout, as a prompt step does per chunk; MB/s counts the
// group's bytes.
func BenchmarkDeinterleave8(b *testing.B) {
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0} {
		for _, lvl := range Levels() {
			restore := ForceLevel(lvl)
			k, err := NewKernel(typ, 2048)
			restore()
			if err != nil {
				b.Fatal(err)
			}
			src := make([]byte, 8*k.WeightRowBytes())
			dst := make([]byte, len(src))
			b.Run(typ.String()+"/"+lvl.String(), func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					k.Deinterleave8(dst, src)
				}
			})
		}
	}
}
