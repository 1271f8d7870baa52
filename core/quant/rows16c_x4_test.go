package quant

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TestDotGroups4MatchesGeneric: DotGroups4 on four groups — Q4_0 col16
// (16 rows a group) and Q8_0 x8 (8) — gives each of their rows the
// one-row generic bits at every level (the four-group kernel where the
// level has it, HasGroups4; else the groups one by one), with and without
// the token table, on random and edge rows of the twin sizes and of rows
// long enough for the four-group kernel; and HasGroups4 holds only for the
// type's layout and groups of groups4MinBytes, and at AVX512 for ffn_down's
// 5632 columns where the level has the kernel.
func TestDotGroups4MatchesGeneric(t *testing.T) {
	g := genericKernels()
	avx512 := slices.Contains(Levels(), AVX512) // levels[AVX512] is set
	for _, c := range []struct {
		typ   gguf.GGMLType
		lay   Layout
		sizes []int // beyond twinSizes
		seed  uint64
		one   func(w, x []byte) float32
		has   func(k *Kernel) bool // the kernel holds the four-group kernel
		avx   bool                 // AVX512 has it (Q4_0's needs GFNI too)
	}{
		{gguf.TypeQ4_0, LayoutCol16, []int{3648, 5632}, 71, g.dotQ4_0Q8_0, func(k *Kernel) bool { return k.rows16x4 != nil }, avx512 && levels[AVX512].dotR16C16x4Q4_0Q8_0 != nil},
		{gguf.TypeQ8_0, LayoutX8, []int{3872, 5632}, 83, g.dotQ8_0Q8_0, func(k *Kernel) bool { return k.rows8x4 != nil }, avx512},
	} {
		gr := c.lay.GroupRows()
		for _, lvl := range Levels() {
			for _, n := range append(twinSizes(c.typ), c.sizes...) {
				if n == 0 {
					continue
				}
				restore := ForceLevel(lvl)
				k, err := NewKernel(c.typ, n)
				restore()
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range []Layout{LayoutFile, LayoutX8, LayoutCol16} {
					if l != c.lay && k.HasGroups4(l) {
						t.Fatalf("%s %s n=%d: HasGroups4 for layout %v", c.typ, lvl, n, l)
					}
				}
				wrb := k.WeightRowBytes()
				if k.HasGroups4(c.lay) != c.has(&k) || (c.has(&k) && gr*wrb < groups4MinBytes) {
					t.Fatalf("%s %s n=%d: HasGroups4 %v for groups of %d bytes", c.typ, lvl, n, k.HasGroups4(c.lay), gr*wrb)
				}
				if n == 5632 && lvl == AVX512 && c.avx && !k.HasGroups4(c.lay) {
					t.Fatalf("%s %s n=%d: no four-group kernel", c.typ, lvl, n)
				}
				for kind := edgeRandom; kind <= edgeMixed; kind++ {
					r := rand.New(rand.NewPCG(uint64(n)+c.seed, uint64(kind)))
					for rep := 0; rep < 3; rep++ {
						ws := make([][]byte, 4*gr)
						xs := make([][]byte, 4*gr)
						for i := range ws {
							ws[i], xs[i] = twinRows(t, r, c.typ, n, kind)
						}
						x := xs[r.IntN(len(xs))] // one token for all rows
						grp := make([]byte, 4*gr*wrb)
						for q := 0; q < 4; q++ {
							var src []byte
							for i := gr * q; i < gr*(q+1); i++ {
								src = append(src, ws[i]...)
							}
							k.Interleave(c.lay, grp[gr*q*wrb:gr*(q+1)*wrb], src)
						}
						var tab []byte
						if tb := k.Token1TableBytes(); tb > 0 {
							tab = make([]byte, tb)
							k.PrepareToken1(x, tab)
						}
						for _, tb := range [][]byte{tab, nil} {
							out := make([]float32, 4*gr)
							for i := range out {
								out[i] = 12345 // every row must be written
							}
							restore := ForceLevel(lvl)
							k.DotGroups4(c.lay, grp, x, tb, out)
							restore()
							for i := range ws {
								if want := c.one(ws[i], x); !sameBits(out[i], want) {
									t.Fatalf("%s %s n=%d kind %d rep %d table %v row %d: %g, generic %g (four-group kernel %v)",
										c.typ, lvl, n, kind, rep, tb != nil, i, out[i], want, k.HasGroups4(c.lay))
								}
							}
						}
					}
				}
			}
		}
	}
}
