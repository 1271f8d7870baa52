//go:build linux && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// BenchmarkMemDecodeCol16: BenchmarkMemDecode's pass over the x8 copy (at
// its prefetch distance) against the same rows in the col16 layout
// (rows16c.go) at several prefetch distances (blocks ahead; rows16c_amd64.go),
// alternating round by round in one process. Logged like
// BenchmarkMemDecode: run with -benchtime 1x.
func BenchmarkMemDecodeCol16(b *testing.B) {
	const n, mrows, typ = memDecodeN, memDecodeRows, gguf.TypeQ4_0
	k, wrb, mats, total := memDecodeKernel(b, typ)
	if k.Layout() != LayoutCol16 {
		b.Skip("no col16 kernel at this level")
	}
	r := rand.New(rand.NewPCG(1, 2))
	row := quantizeWeights(b, typ, gaussian(r, 64*n, 0.02))
	src := make([]byte, 0, 16*wrb)
	for len(src) < 16*wrb {
		src = append(src, row...)
	}
	src = src[:16*wrb]
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
	block, pf, dists := bytesQ4c16, &c16PrefetchQ4_0, []int{0, 4, 8, 12, 16}
	keep := *pf
	defer func() { *pf = keep }()
	vs := []memVariant{{"x8", len(w8), func() {
		memPass(s, mats, mrows, func(worker, lo, hi, base int) {
			for i := base + lo; i < base+hi; i += 8 {
				k.Dot8RowsX8(w8[i*wrb:(i+8)*wrb], x, tab, &o8[worker])
			}
		})
	}}}
	for _, blocks := range dists {
		vs = append(vs, memVariant{fmt.Sprintf("c16pf%d", blocks), len(wc), func() {
			*pf = blocks * block
			memPass(s, mats, mrows, func(worker, lo, hi, base int) {
				for i := base + lo; i < base+hi; i += 16 {
					k.DotGroup(LayoutCol16, wc[i*wrb:(i+16)*wrb], x, tab, o16[worker][:])
				}
			})
		}})
	}
	for b.Loop() {
		memRounds(b, vs)
	}
}
