package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TestDotGroups4Q4KMatchesGeneric: DotGroups4 on four Q4_K col16 groups
// gives each of their 64 rows the one-row generic bits at every level (the
// panel kernel, rows16C16x4Q4KPanels, where the level has it; else the
// groups one by one), at several panel widths (one column, widths that
// do and do not divide the row, wider than the row), on random and edge
// rows of the twin sizes and of rows long enough for the four-group path;
// and HasGroups4 holds only for col16 and groups of groups4MinBytes.
func TestDotGroups4Q4KMatchesGeneric(t *testing.T) {
	const typ = gguf.TypeQ4_K
	one := genericKernels().dotQ4_KQ8_K
	defer func(p int) { c16PanelQ4K = p }(c16PanelQ4K)
	for _, lvl := range Levels() {
		for _, n := range append(twinSizes(typ), 4096, 5632) {
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
			if n == 5632 && lvl == AVX512 && levels[AVX512].dotR16C16x4Q4_KQ8_K != nil && !k.HasGroups4(LayoutCol16) {
				t.Fatalf("%s n=%d: no four-group kernel", lvl, n)
			}
			for kind := edgeRandom; kind <= edgeMixed; kind++ {
				r := rand.New(rand.NewPCG(uint64(n)+73, uint64(kind)))
				for rep := 0; rep < 2; rep++ {
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
					for _, p := range []int{1, 3, 4, 8, 100} {
						c16PanelQ4K = p
						out := make([]float32, 64)
						for i := range out {
							out[i] = 12345 // every row must be written
						}
						restore := ForceLevel(lvl)
						k.DotGroups4(LayoutCol16, g, x, nil, out)
						restore()
						for i := range ws {
							if want := one(ws[i], x); !sameBits(out[i], want) {
								t.Fatalf("%s n=%d kind %d rep %d panel %d row %d: %g, generic %g (four-group kernel %v)",
									lvl, n, kind, rep, p, i, out[i], want, k.HasGroups4(LayoutCol16))
							}
						}
					}
				}
			}
		}
	}
}

// TestDotGroups4Q6KX8MatchesGeneric: DotGroups4 on four Q6_K K x8 groups
// gives each of their 32 rows the one-row generic bits at every level (the
// panel kernel, rows8X8x4Q6KPanels, where the level has it and the groups
// are of groups4MinBytes or more; else the groups one by one), at several
// panel widths, on random and edge rows.
func TestDotGroups4Q6KX8MatchesGeneric(t *testing.T) {
	const typ = gguf.TypeQ6_K
	one := genericKernels().dotQ6_KQ8_K
	defer func(p int) { k8PanelQ6K = p }(k8PanelQ6K)
	for _, lvl := range Levels() {
		for _, n := range append(twinSizes(typ), 4096, 5632) {
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
			if n == 5632 && lvl == AVX512 && levels[AVX512].dotR8X8x4Q6_KQ8_K != nil && !k.HasGroups4(LayoutX8) {
				t.Fatalf("%s n=%d: no four-group kernel", lvl, n)
			}
			for kind := edgeRandom; kind <= edgeMixed; kind++ {
				r := rand.New(rand.NewPCG(uint64(n)+89, uint64(kind)))
				for rep := 0; rep < 2; rep++ {
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
					for _, p := range []int{1, 3, 4, 8, 100} {
						k8PanelQ6K = p
						out := make([]float32, 32)
						for i := range out {
							out[i] = 12345
						}
						restore := ForceLevel(lvl)
						k.DotGroups4(LayoutX8, g, x, nil, out)
						restore()
						for i := range ws {
							if want := one(ws[i], x); !sameBits(out[i], want) {
								t.Fatalf("%s n=%d kind %d rep %d panel %d row %d: %g, generic %g (four-group kernel %v)",
									lvl, n, kind, rep, p, i, out[i], want, k.HasGroups4(LayoutX8))
							}
						}
					}
				}
			}
		}
	}
}
