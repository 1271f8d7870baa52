//go:build !noasm

package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
	"golang.org/x/sys/cpu"
)

// TestRows16C16Q4_0KernelsMatchGeneric: the AVX-512 bodies of the Q4_0
// col16 decode kernel (with and without GFNI, the GFNI one with and
// without its software prefetch, whichever the level does not take
// included) give each row the one-row generic bits, on random and edge
// rows of one, odd and many blocks, as TestRows16C16MatchGeneric checks
// the level's own.
func TestRows16C16Q4_0KernelsMatchGeneric(t *testing.T) {
	if !hasAVX512() {
		t.Skip("no AVX-512")
	}
	bodies := map[string]func(w *byte, x *byte, nb int, tab *byte, out *[16]float32){"avx512": c16Q4_0Kernel(false)}
	if cpu.X86.HasAVX512GFNI {
		bodies["gfni"] = q4_0q8_0r16c16GFNI
		bodies["gfni-noprefetch"] = q4_0q8_0r16c16GFNINoPF
	} else {
		t.Log("no GFNI: only the plain body runs")
	}
	const typ = gguf.TypeQ4_0
	one := genericKernels().dotQ4_0Q8_0
	defer ForceLevel(AVX512)()
	for _, n := range twinSizes(typ) {
		if n == 0 {
			continue
		}
		k, err := NewKernel(typ, n)
		if err != nil {
			t.Fatal(err)
		}
		for kind := edgeRandom; kind <= edgeMixed; kind++ {
			r := rand.New(rand.NewPCG(uint64(n)+67, uint64(kind)))
			for rep := 0; rep < 4; rep++ {
				var ws [16][]byte
				var x []byte
				var src []byte
				for i := range ws {
					ws[i], x = twinRows(t, r, typ, n, kind)
					src = append(src, ws[i]...)
				}
				g := make([]byte, len(src))
				k.Interleave(LayoutCol16, g, src)
				tab := make([]byte, k.Token1TableBytes())
				k.PrepareToken1(x, tab)
				for name, body := range bodies {
					var out [16]float32
					body(&g[0], &x[0], n/qk, &tab[0], &out)
					for i := range ws {
						if want := one(ws[i], x); !sameBits(out[i], want) {
							t.Fatalf("%s n=%d kind %d rep %d row %d: %g, generic %g", name, n, kind, rep, i, out[i], want)
						}
					}
				}
			}
		}
	}
}

// TestRows16C16x4Q4_0KernelMatchesGeneric: the four-group Q4_0 col16
// decode kernel (GFNI, with and without its software prefetch) gives each
// of its 64 rows the one-row generic bits, on random and edge rows of the
// twin sizes, whatever the current level.
func TestRows16C16x4Q4_0KernelMatchesGeneric(t *testing.T) {
	if !hasAVX512() || !cpu.X86.HasAVX512GFNI {
		t.Skip("no AVX-512 GFNI")
	}
	const typ = gguf.TypeQ4_0
	one := genericKernels().dotQ4_0Q8_0
	defer ForceLevel(AVX512)()
	for _, n := range twinSizes(typ) {
		if n == 0 {
			continue
		}
		k, err := NewKernel(typ, n)
		if err != nil {
			t.Fatal(err)
		}
		wrb := k.WeightRowBytes()
		for kind := edgeRandom; kind <= edgeMixed; kind++ {
			r := rand.New(rand.NewPCG(uint64(n)+73, uint64(kind)))
			for rep := 0; rep < 3; rep++ {
				var ws [64][]byte
				var x []byte
				for i := range ws {
					ws[i], x = twinRows(t, r, typ, n, kind)
				}
				// a gap between the groups: the stride is the argument's
				stride := 16*wrb + 288*r.IntN(3)
				g := make([]byte, 3*stride+16*wrb)
				for q := 0; q < 4; q++ {
					var src []byte
					for i := 16 * q; i < 16*q+16; i++ {
						src = append(src, ws[i]...)
					}
					k.Interleave(LayoutCol16, g[q*stride:q*stride+16*wrb], src)
				}
				tab := make([]byte, k.Token1TableBytes())
				k.PrepareToken1(x, tab)
				for name, body := range map[string]func(w *byte, stride int, x *byte, nb int, tab *byte, out *[64]float32){
					"prefetch": q4_0q8_0r16c16x4GFNI, "noprefetch": q4_0q8_0r16c16x4GFNINoPF} {
					var out [64]float32
					body(&g[0], stride, &x[0], n/qk, &tab[0], &out)
					for i := range ws {
						if want := one(ws[i], x); !sameBits(out[i], want) {
							t.Fatalf("%s n=%d kind %d rep %d row %d: %g, generic %g", name, n, kind, rep, i, out[i], want)
						}
					}
				}
			}
		}
	}
}
