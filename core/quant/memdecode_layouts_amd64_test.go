//go:build linux && amd64 && !noasm

package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// BenchmarkMemDecodeLayouts: BenchmarkMemDecode's pass for Q4_0, Q4_K and
// Q6_K in the col16 layout (at the kernels' prefetch distances) and in x8,
// for Q8_0 (no col16 kernel) in x8 and in the file layout, with the meter,
// all alternating round by round in one process, so that the layouts are
// compared at the same moments of a shared machine (what the choice of
// layout, the CPU backend's repackLayout, rests on). Logged like BenchmarkMemDecode: run with
// -benchtime 1x. Skips where the level has no col16 kernels for the K
// types; Q4_0 takes only x8 where it has no col16 kernel.
func BenchmarkMemDecodeLayouts(b *testing.B) {
	s := newSpin2()
	defer s.quit.Store(true)
	var vs []memVariant
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		k, wrb, mats, total := memDecodeKernel(b, typ)
		c16 := k.Has(LayoutCol16) && k.rows16 != nil
		if !c16 && (typ == gguf.TypeQ4_K || typ == gguf.TypeQ6_K) {
			b.Skip("no col16 kernel at this level")
		}
		r := rand.New(rand.NewPCG(1, 2))
		src := memDecodeSource16(b, typ, wrb, r)
		x, tab := memDecodeToken(b, k, r)
		mrows := memDecodeRows
		if c16 {
			wc := hugeBuf(b, total*wrb)
			for o := 0; o+16*wrb <= len(wc); o += 16 * wrb {
				k.Interleave(LayoutCol16, wc[o:o+16*wrb], src)
			}
			var o16 [2][16]float32
			vs = append(vs, memVariant{typ.String() + "c16", len(wc), func() {
				memPass(s, mats, mrows, func(worker, lo, hi, base int) {
					for i := base + lo; i < base+hi; i += 16 {
						k.DotGroup(LayoutCol16, wc[i*wrb:(i+16)*wrb], x, tab, o16[worker][:])
					}
				})
			}})
		} else {
			// The file layout, as BenchmarkMemDecode reads it.
			wf := hugeBuf(b, total*wrb)
			for o := 0; o+16*wrb <= len(wf); o += 16 * wrb {
				copy(wf[o:o+16*wrb], src)
			}
			var of [2][8]float32
			vs = append(vs, memVariant{typ.String() + "file", len(wf), func() {
				memPass(s, mats, mrows, func(worker, lo, hi, base int) {
					for i := base + lo; i < base+hi; i += 8 {
						if tab == nil {
							k.Dot4Rows(wf[i*wrb:(i+4)*wrb], x, (*[4]float32)(of[worker][:4]))
							k.Dot4Rows(wf[(i+4)*wrb:(i+8)*wrb], x, (*[4]float32)(of[worker][4:]))
						} else {
							k.Dot8RowsT(wf[i*wrb:(i+8)*wrb], x, tab, &of[worker])
						}
					}
				})
			}})
		}
		w8 := hugeBuf(b, total*wrb)
		for o := 0; o+16*wrb <= len(w8); o += 16 * wrb {
			k.Interleave8(w8[o:o+8*wrb], src[:8*wrb])
			k.Interleave8(w8[o+8*wrb:o+16*wrb], src[8*wrb:])
		}
		var o8 [2][8]float32
		vs = append(vs, memVariant{typ.String() + "x8", len(w8), func() {
			memPass(s, mats, mrows, func(worker, lo, hi, base int) {
				for i := base + lo; i < base+hi; i += 8 {
					k.Dot8RowsX8(w8[i*wrb:(i+8)*wrb], x, tab, &o8[worker])
				}
			})
		}})
		if typ == gguf.TypeQ4_K {
			vs = append(vs, meterVariant(b, s, len(w8)))
		}
	}
	for b.Loop() {
		memRounds(b, vs)
	}
}
