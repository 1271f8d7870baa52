package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TestDotGroups4MatchesGeneric: DotGroups4 on four Q4_0 col16 groups gives
// each of their 64 rows the one-row generic bits at every level (the
// four-group kernel where the level has it, HasGroups4; else the groups
// one by one), with and without the token table, on random and edge rows
// of the twin sizes and of rows long enough for the four-group kernel;
// and HasGroups4 holds only for col16 and groups of groups4MinBytes.
func TestDotGroups4MatchesGeneric(t *testing.T) {
	const typ = gguf.TypeQ4_0
	one := genericKernels().dotQ4_0Q8_0
	for _, lvl := range Levels() {
		for _, n := range append(twinSizes(typ), 3648, 5632) {
			if n == 0 {
				continue
			}
			restore := ForceLevel(lvl)
			k, err := NewKernel(typ, n)
			restore()
			if err != nil {
				t.Fatal(err)
			}
			if k.HasGroups4(LayoutX8) || k.HasGroups4(LayoutFile) {
				t.Fatalf("%s n=%d: HasGroups4 for a layout other than col16", lvl, n)
			}
			wrb := k.WeightRowBytes()
			if k.HasGroups4(LayoutCol16) != (k.rows16x4 != nil) || (k.rows16x4 != nil && 16*wrb < groups4MinBytes) {
				t.Fatalf("%s n=%d: HasGroups4 %v for groups of %d bytes", lvl, n, k.HasGroups4(LayoutCol16), 16*wrb)
			}
			if n == 5632 && lvl == AVX512 && levels[AVX512].dotR16C16x4Q4_0Q8_0 != nil && !k.HasGroups4(LayoutCol16) {
				t.Fatalf("%s n=%d: no four-group kernel", lvl, n)
			}
			for kind := edgeRandom; kind <= edgeMixed; kind++ {
				r := rand.New(rand.NewPCG(uint64(n)+71, uint64(kind)))
				for rep := 0; rep < 3; rep++ {
					var ws [64][]byte
					var xs [64][]byte
					for i := range ws {
						ws[i], xs[i] = twinRows(t, r, typ, n, kind)
					}
					x := xs[r.IntN(64)] // one token for all rows
					g := make([]byte, 64*wrb)
					for q := 0; q < 4; q++ {
						var src []byte
						for i := 16 * q; i < 16*q+16; i++ {
							src = append(src, ws[i]...)
						}
						k.Interleave(LayoutCol16, g[16*q*wrb:16*(q+1)*wrb], src)
					}
					var tab []byte
					if tb := k.Token1TableBytes(); tb > 0 {
						tab = make([]byte, tb)
						k.PrepareToken1(x, tab)
					}
					for _, tb := range [][]byte{tab, nil} {
						out := make([]float32, 64)
						for i := range out {
							out[i] = 12345 // every row must be written
						}
						restore := ForceLevel(lvl)
						k.DotGroups4(LayoutCol16, g, x, tb, out)
						restore()
						for i := range ws {
							if want := one(ws[i], x); !sameBits(out[i], want) {
								t.Fatalf("%s n=%d kind %d rep %d table %v row %d: %g, generic %g (four-group kernel %v)",
									lvl, n, kind, rep, tb != nil, i, out[i], want, k.HasGroups4(LayoutCol16))
							}
						}
					}
				}
			}
		}
	}
}

// TestDotGroups4X8MatchesGeneric: DotGroups4 on four Q8_0 x8 groups gives
// each of their 32 rows the one-row generic bits at every level (the
// four-group kernel where the level has it and the groups are of
// groups4MinBytes or more), with and without the token table.
func TestDotGroups4X8MatchesGeneric(t *testing.T) {
	const typ = gguf.TypeQ8_0
	one := genericKernels().dotQ8_0Q8_0
	for _, lvl := range Levels() {
		for _, n := range append(twinSizes(typ), 3872, 5632) {
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
			if k.HasGroups4(LayoutCol16) || k.HasGroups4(LayoutFile) || (k.HasGroups4(LayoutX8) && 8*wrb < groups4MinBytes) {
				t.Fatalf("%s n=%d: HasGroups4 col16 %v file %v x8 %v", lvl, n, k.HasGroups4(LayoutCol16), k.HasGroups4(LayoutFile), k.HasGroups4(LayoutX8))
			}
			if n == 5632 && lvl == AVX512 && !k.HasGroups4(LayoutX8) {
				t.Fatalf("%s n=%d: no four-group kernel", lvl, n)
			}
			for kind := edgeRandom; kind <= edgeMixed; kind++ {
				r := rand.New(rand.NewPCG(uint64(n)+83, uint64(kind)))
				for rep := 0; rep < 3; rep++ {
					var ws [32][]byte
					var xs [32][]byte
					for i := range ws {
						ws[i], xs[i] = twinRows(t, r, typ, n, kind)
					}
					x := xs[r.IntN(32)]
					g := make([]byte, 32*wrb)
					for q := 0; q < 4; q++ {
						var src []byte
						for i := 8 * q; i < 8*q+8; i++ {
							src = append(src, ws[i]...)
						}
						k.Interleave(LayoutX8, g[8*q*wrb:8*(q+1)*wrb], src)
					}
					tab := make([]byte, k.Token1TableBytes())
					k.PrepareToken1(x, tab)
					for _, tb := range [][]byte{tab, nil} {
						out := make([]float32, 32)
						for i := range out {
							out[i] = 12345
						}
						restore := ForceLevel(lvl)
						k.DotGroups4(LayoutX8, g, x, tb, out)
						restore()
						for i := range ws {
							if want := one(ws[i], x); !sameBits(out[i], want) {
								t.Fatalf("%s n=%d kind %d rep %d table %v row %d: %g, generic %g (four-group kernel %v)",
									lvl, n, kind, rep, tb != nil, i, out[i], want, k.HasGroups4(LayoutX8))
							}
						}
					}
				}
			}
		}
	}
}
