package quant

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TestRows16C16MatchGeneric: the col16 layout of Q4_0 (rows16c.go) puts row r's quant bytes 4c..4c+3 of each block at
// 32+64c+4r and its scale at 2r; Interleave and Deinterleave are inverse;
// at every level the col16 kernels (DotGroup with and without the token
// table, DotGroupRow) give each row the one-row generic bits of the row in
// the file layout, on random and edge rows (zero blocks, largest scales
// and extreme quants, mixed) of one, odd and many blocks; and where the
// level prepares a col16 row quad for the tile kernels as it lies
// (PrepGroup), the bytes are Prep4's on the file rows (the Go twins'
// against the file-row twins at every level).
func TestRows16C16MatchGeneric(t *testing.T) {
	const typ, bs = gguf.TypeQ4_0, bytesQ4
	one := genericKernels().dotQ4_0Q8_0
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
			wrb := k.WeightRowBytes()
			nb := n / qk
			for kind := edgeRandom; kind <= edgeMixed; kind++ {
				r := rand.New(rand.NewPCG(uint64(n)+61, uint64(kind)))
				for rep := 0; rep < 4; rep++ {
					var ws [16][]byte
					var x []byte
					for i := range ws {
						ws[i], x = twinRows(t, r, typ, n, kind)
					}
					var src []byte
					for i := range ws {
						src = append(src, ws[i]...)
					}
					g := make([]byte, len(src))
					k.Interleave(LayoutCol16, g, src)
					for b := 0; b < nb; b++ {
						for row := 0; row < 16; row++ {
							fb := ws[row][b*bs:]
							gb := g[b*16*bs:]
							if gb[2*row] != fb[0] || gb[2*row+1] != fb[1] {
								t.Fatalf("%s n=%d block %d row %d: scale not at 2r", typ, n, b, row)
							}
							for j := 0; j < bs-2; j++ {
								if gb[32+64*(j/4)+4*row+j%4] != fb[2+j] {
									t.Fatalf("%s n=%d block %d row %d: quant byte %d misplaced", typ, n, b, row, j)
								}
							}
						}
					}
					back := make([]byte, len(src))
					k.Deinterleave(LayoutCol16, back, g)
					if !bytes.Equal(back, src) {
						t.Fatalf("%s %s n=%d: Deinterleave(Interleave(w)) != w", typ, lvl, n)
					}
					// The Go twin of the preparation of each quad.
					u, want := make([]byte, prep4Q4_0S*nb), make([]byte, prep4Q4_0S*nb)
					for q := 0; q < 4; q++ {
						unpack4Q4_0SGeneric(src[4*q*wrb:], wrb, want)
						prep4x16Q4_0SGeneric(g, q, u)
						if !bytes.Equal(u, want) {
							t.Fatalf("%s n=%d quad %d: the col16 preparation's Go twin differs from the file rows'", typ, n, q)
						}
					}
					pb := k.Prep4Bytes()
					if k.HasPrepGroup(LayoutCol16) {
						u, want := make([]byte, pb), make([]byte, pb)
						for q := 0; q < 4; q++ {
							k.Prep4(src[4*q*wrb:(4*q+4)*wrb], want)
							clear(u)
							k.PrepGroup(LayoutCol16, g, q, u)
							if !bytes.Equal(u, want) {
								t.Fatalf("%s %s n=%d kind %d quad %d: PrepGroup differs from Prep4 on the file rows", typ, lvl, n, kind, q)
							}
						}
					}
					restore := ForceLevel(lvl)
					tab := make([]byte, k.Token1TableBytes())
					k.PrepareToken1(x, tab)
					restore()
					if len(tab) == 0 {
						tab = nil
					}
					var out, outG [16]float32
					k.DotGroup(LayoutCol16, g, x, tab, out[:])
					k.DotGroup(LayoutCol16, g, x, nil, outG[:])
					for i := range ws {
						want := one(ws[i], x)
						if !sameBits(out[i], want) || !sameBits(outG[i], want) {
							t.Fatalf("%s %s n=%d kind %d rep %d row %d: %g (no table %g), generic %g", typ, lvl, n, kind, rep, i, out[i], outG[i], want)
						}
						if got := k.DotGroupRow(LayoutCol16, g, i, x); !sameBits(got, want) {
							t.Fatalf("%s %s n=%d row %d: DotGroupRow %g, generic %g", typ, lvl, n, i, got, want)
						}
					}
				}
			}
		}
	}
}

// TestLayoutByLevel: Q4_0 weights are repacked to col16 where the level
// has its decode kernel (AVX-512), to x8 at the AVX2 level, not at all at
// the generic one; Q8_0 keeps x8; the generic twins still run each layout
// at every level (Has).
func TestLayoutByLevel(t *testing.T) {
	for _, lvl := range Levels() {
		restore := ForceLevel(lvl)
		k4, _ := NewKernel(gguf.TypeQ4_0, 64)
		k8, _ := NewKernel(gguf.TypeQ8_0, 64)
		restore()
		want4, want8 := LayoutFile, LayoutFile
		switch lvl {
		case AVX512:
			want4, want8 = LayoutCol16, LayoutX8
		case AVX2, NEON, NEONDot:
			if k4.HasX8() {
				want4 = LayoutX8
			}
			if k8.HasX8() {
				want8 = LayoutX8
			}
		}
		if got := k4.Layout(); got != want4 {
			t.Errorf("%s: Q4_0 layout %s, want %s", lvl, got, want4)
		}
		if got := k8.Layout(); got != want8 {
			t.Errorf("%s: Q8_0 layout %s, want %s", lvl, got, want8)
		}
		if !k4.Has(LayoutCol16) || k8.Has(LayoutCol16) || !k8.Has(LayoutX8) {
			t.Errorf("%s: Has col16 Q4_0 %v Q8_0 %v", lvl, k4.Has(LayoutCol16), k8.Has(LayoutCol16))
		}
		if LayoutCol16.GroupRows() != 16 || LayoutX8.GroupRows() != 8 || LayoutFile.GroupRows() != 0 {
			t.Error("GroupRows")
		}
	}
}

// BenchmarkRows16C16 is one col16 group against two x8 groups of the same
// sixteen rows of 4096 (in cache; Q4_0, Q4_K, Q6_K), and the tile kernels' preparation of the
// sixteen rows' four quads from either, alternating rounds.
func BenchmarkRows16C16(b *testing.B) {
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		b.Run(typ.String(), func(b *testing.B) { benchRows16C16(b, typ) })
	}
}

func benchRows16C16(b *testing.B, typ gguf.GGMLType) {
	const n = 4096
	k, _ := NewKernel(typ, n)
	if k.Layout() != LayoutCol16 {
		b.Skip("no col16 kernel at this level")
	}
	r := rand.New(rand.NewPCG(1, 2))
	var src []byte
	for i := 0; i < 16; i++ {
		src = append(src, quantizeWeights(b, typ, gaussian(r, n, 0.02))...)
	}
	x := quantizeRow(b, VecDotType(typ), gaussian(r, n, 1))
	var tab []byte
	if tb := k.Token1TableBytes(); tb > 0 {
		tab = make([]byte, tb)
		k.PrepareToken1(x, tab)
	}
	col := make([]byte, len(src))
	k.Interleave(LayoutCol16, col, src)
	w8 := make([]byte, len(src))
	g8 := 8 * k.WeightRowBytes()
	k.Interleave8(w8[:g8], src[:g8])
	k.Interleave8(w8[g8:], src[g8:])
	var o16 [16]float32
	var o8 [8]float32
	u := make([]byte, k.Prep4Bytes())
	for b.Loop() {
		abRounds(b, []abVariant{
			{"x8x2", func() {
				k.Dot8RowsX8(w8[:g8], x, tab, &o8)
				k.Dot8RowsX8(w8[g8:], x, tab, &o8)
			}},
			{"col16", func() { k.DotGroup(LayoutCol16, col, x, tab, o16[:]) }},
			{"prepx8x4", func() {
				for q := 0; q < 4; q++ {
					k.Prep4X8(w8[q/2*g8:], q%2, u)
				}
			}},
			{"prepc16x4", func() {
				for q := 0; q < 4; q++ {
					k.PrepGroup(LayoutCol16, col, q, u)
				}
			}},
		})
	}
}

// BenchmarkDeinterleave16 is BenchmarkDeinterleave8 for the col16 layout:
// a group of sixteen rows back into the file layout (what a prompt step
// that cannot run on the groups as they lie does to every group).
func BenchmarkDeinterleave16(b *testing.B) {
	for _, lvl := range Levels() {
		restore := ForceLevel(lvl)
		k, err := NewKernel(gguf.TypeQ4_0, 2048)
		restore()
		if err != nil {
			b.Fatal(err)
		}
		src := make([]byte, 16*k.WeightRowBytes())
		dst := make([]byte, len(src))
		b.Run("Q4_0/"+lvl.String(), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				k.Deinterleave(LayoutCol16, dst, src)
			}
		})
	}
}
