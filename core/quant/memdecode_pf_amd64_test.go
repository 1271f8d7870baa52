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
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
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
	x, tab := memDecodeToken(b, k, r)
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
	// group: the bytes of one block column of the stream the kernel reads.
	group, pf, dists := bytesQ4x8, &x8PrefetchQ4_0, []int{0, 8, 16, 24, 32, 48, 64}
	switch typ {
	case gguf.TypeQ8_0:
		group, pf, dists = bytesQ80x8, &x8PrefetchQ8_0, []int{0, 2, 3, 4, 5, 6, 8, 16}
	case gguf.TypeQ4_K:
		group, pf, dists = 4*bytesQ4K, &x8PrefetchQ4_K, []int{0, 2, 4, 8, 16, 32}
		if CurrentLevel() == AVX2 {
			pf = &x8PrefetchQ4_KAVX2
		}
	case gguf.TypeQ6_K:
		group, pf, dists = 4*bytesQ6K, &x8PrefetchQ6_K, []int{0, 2, 3, 4, 6, 8, 12, 16}
		if CurrentLevel() == AVX2 {
			pf = &x8PrefetchQ6_KAVX2
		}
	}
	keep := *pf
	defer func() { *pf = keep }()
	var vs []memVariant
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
