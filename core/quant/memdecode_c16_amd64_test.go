//go:build linux && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
	"golang.org/x/sys/cpu"
)

// BenchmarkMemDecodeCol16: BenchmarkMemDecode's pass over the x8 copy (at
// its prefetch distance) against the same rows in the col16 layout
// (rows16c.go, rows16k.go) at several prefetch distances (bytes ahead:
// c16PrefetchQ4_0, c16PrefetchQ4K, c16PrefetchQ6K), with the meter,
// alternating round by round in one process, for each type with a col16
// kernel at this level (Q4_0 and Q4_K also without prefetch: c16nopf). Logged like
// BenchmarkMemDecode: run with -benchtime 1x.
func BenchmarkMemDecodeCol16(b *testing.B) {
	for _, c := range []struct {
		typ   gguf.GGMLType
		pf    *int
		dists []int
	}{
		{gguf.TypeQ4_0, &c16PrefetchQ4_0, []int{0, 4 * bytesQ4c16, 8 * bytesQ4c16, 12 * bytesQ4c16, 16 * bytesQ4c16}},
		{gguf.TypeQ4_K, &c16PrefetchQ4K, []int{0, 768, 1152, 1536, 2304, 3456, 4608, 6912}},
		{gguf.TypeQ6_K, &c16PrefetchQ6K, []int{0, 2304, 6720, 13440, 20160, 26880}},
	} {
		b.Run(c.typ.String(), func(b *testing.B) { benchMemDecodeCol16(b, c.typ, c.pf, c.dists) })
	}
}

func benchMemDecodeCol16(b *testing.B, typ gguf.GGMLType, pf *int, dists []int) {
	const n, mrows = memDecodeN, memDecodeRows
	k, wrb, mats, total := memDecodeKernel(b, typ)
	if k.Layout() != LayoutCol16 {
		b.Skip("no col16 kernel at this level")
	}
	r := rand.New(rand.NewPCG(1, 2))
	src := memDecodeSource16(b, typ, wrb, r)
	w8, wc := hugeBuf(b, total*wrb), hugeBuf(b, total*wrb)
	for o := 0; o+16*wrb <= len(w8); o += 16 * wrb {
		k.Interleave8(w8[o:o+8*wrb], src[:8*wrb])
		k.Interleave8(w8[o+8*wrb:o+16*wrb], src[8*wrb:])
		k.Interleave(LayoutCol16, wc[o:o+16*wrb], src)
	}
	x, tab := memDecodeToken(b, k, r)
	s := newSpin2()
	defer s.quit.Store(true)
	var o8 [2][8]float32
	var o16 [2][16]float32
	keep := *pf
	defer func() { *pf = keep }()
	vs := []memVariant{meterVariant(b, s, len(w8)), {"x8", len(w8), func() {
		memPass(s, mats, mrows, func(worker, lo, hi, base int) {
			for i := base + lo; i < base+hi; i += 8 {
				k.Dot8RowsX8(w8[i*wrb:(i+8)*wrb], x, tab, &o8[worker])
			}
		})
	}}}
	// Q4_0 with GFNI: the distances run the prefetching body whatever the
	// level takes (c16Q4_0Prefetch), and "c16nopf" the one without.
	group := func(w []byte, worker int) { k.DotGroup(LayoutCol16, w, x, tab, o16[worker][:]) }
	if typ == gguf.TypeQ4_0 && cpu.X86.HasAVX512GFNI && CurrentLevel() == AVX512 {
		pfBody, noBody := rows16C16(q4_0q8_0r16c16GFNI), rows16C16(q4_0q8_0r16c16GFNINoPF)
		group = func(w []byte, worker int) { pfBody(w, x, tab, &o16[worker]) }
		vs = append(vs, memVariant{"c16nopf", len(wc), func() {
			memPass(s, mats, mrows, func(worker, lo, hi, base int) {
				for i := base + lo; i < base+hi; i += 16 {
					noBody(wc[i*wrb:(i+16)*wrb], x, tab, &o16[worker])
				}
			})
		}})
	}
	// Q4_K: likewise through c16Q4KPrefetch, which rows16C16Q4K reads at
	// each call.
	keepQ4K := c16Q4KPrefetch
	defer func() { c16Q4KPrefetch = keepQ4K }()
	if typ == gguf.TypeQ4_K {
		vs = append(vs, memVariant{"c16nopf", len(wc), func() {
			c16Q4KPrefetch = false
			memPass(s, mats, mrows, func(worker, lo, hi, base int) {
				for i := base + lo; i < base+hi; i += 16 {
					group(wc[i*wrb:(i+16)*wrb], worker)
				}
			})
		}})
	}
	for _, d := range dists {
		vs = append(vs, memVariant{fmt.Sprintf("c16pf%d", d), len(wc), func() {
			*pf = d
			c16Q4KPrefetch = true
			memPass(s, mats, mrows, func(worker, lo, hi, base int) {
				for i := base + lo; i < base+hi; i += 16 {
					group(wc[i*wrb:(i+16)*wrb], worker)
				}
			})
		}})
	}
	for b.Loop() {
		memRounds(b, vs)
	}
}

// memDecodeSource16 is sixteen rows of wrb bytes of typ-quantized weights
// (one row of memDecodeN gaussian values from r, repeated): what the memory
// benchmarks interleave into their layouts.
func memDecodeSource16(b *testing.B, typ gguf.GGMLType, wrb int, r *rand.Rand) []byte {
	row := quantizeWeights(b, typ, gaussian(r, 64*memDecodeN, 0.02))
	src := make([]byte, 0, 16*wrb)
	for len(src) < 16*wrb {
		src = append(src, row...)
	}
	return src[:16*wrb]
}
