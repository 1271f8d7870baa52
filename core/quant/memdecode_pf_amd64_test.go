//go:build linux && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// BenchmarkMemDecodePF: BenchmarkMemDecode's x8 pass at several
// prefetch distances (blocks ahead; x8prefetch_amd64.go), alternating
// round by round in one process so that the VM's drift hits every
// distance alike. Logged like BenchmarkMemDecode: run with -benchtime 1x.
func BenchmarkMemDecodePF(b *testing.B) {
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0} {
		b.Run(typ.String(), func(b *testing.B) { benchMemDecodePF(b, typ) })
	}
}

func benchMemDecodePF(b *testing.B, typ gguf.GGMLType) {
	const n, mrows = memDecodeN, memDecodeRows
	k, wrb, mats, total := memDecodeKernel(b, typ)
	r := rand.New(rand.NewPCG(1, 2))
	row := quantizeWeights(b, typ, gaussian(r, 64*n, 0.02))
	w8 := hugeBuf(b, total*wrb)
	for o := 0; o+8*wrb <= len(w8); o += 8 * wrb {
		src := make([]byte, 0, 8*wrb)
		for len(src) < 8*wrb {
			src = append(src, row...)
		}
		k.Interleave8(w8[o:o+8*wrb], src[:8*wrb])
	}
	x := quantizeRow(b, gguf.TypeQ8_0, gaussian(r, n, 1))
	tab := make([]byte, k.Token1TableBytes())
	k.PrepareToken1(x, tab)
	s := newSpin2()
	defer s.quit.Store(true)
	var o8 [2][8]float32
	pass := func() {
		memPass(s, mats, mrows, func(worker, lo, hi, base int) {
			for i := base + lo; i < base+hi; i += 8 {
				k.Dot8RowsX8(w8[i*wrb:(i+8)*wrb], x, tab, &o8[worker])
			}
		})
	}
	group, pf := bytesQ4x8, &x8PrefetchQ4_0
	if typ == gguf.TypeQ8_0 {
		group, pf = bytesQ80x8, &x8PrefetchQ8_0
	}
	keep := *pf
	defer func() { *pf = keep }()
	var vs []memVariant
	dists := []int{0, 8, 12, 16, 20, 24, 32}
	if typ == gguf.TypeQ8_0 {
		dists = []int{0, 2, 3, 4, 5, 6, 8, 16}
	}
	for _, blocks := range dists {
		vs = append(vs, memVariant{fmt.Sprintf("pf%d", blocks), len(w8), func() {
			*pf = blocks * group
			pass()
		}})
	}
	for b.Loop() {
		memRounds(b, vs)
	}
}
