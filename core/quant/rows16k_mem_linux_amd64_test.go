//go:build !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/minfer/minfer/gguf"
)

// BenchmarkMemDecodeC16K is BenchmarkMemDecode's Q4_K (Q6_K) pass on the
// K x8 layout (Dot8RowsX8) against the c16 layout (rows16C16Q4KAVX512,
// rows16C16Q6KAVX512) at several prefetch distances (c16PrefetchQ4K,
// c16PrefetchQ6K), with the meter; -benchtime 1x, results logged.
func BenchmarkMemDecodeC16K(b *testing.B) {
	if !hasAVX512() {
		b.Skip("no AVX-512")
	}
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_K, gguf.TypeQ6_K} {
		b.Run(typ.String(), func(b *testing.B) { benchMemDecodeC16K(b, typ) })
	}
}

func benchMemDecodeC16K(b *testing.B, typ gguf.GGMLType) {
	const n, mrows = memDecodeN, memDecodeRows
	k, wrb, mats, total := memDecodeKernel(b, typ)
	w := hugeBuf(b, total*wrb)
	r := rand.New(rand.NewPCG(1, 2))
	row := quantizeWeights(b, typ, gaussian(r, 64*n, 0.02))
	for o := 0; o < len(w); o += len(row) {
		copy(w[o:], row)
	}
	w8 := hugeBuf(b, len(w))
	w16 := hugeBuf(b, len(w))
	for o := 0; o < len(w); o += 16 * wrb {
		k.Interleave8(w8[o:o+8*wrb], w[o:o+8*wrb])
		k.Interleave8(w8[o+8*wrb:o+16*wrb], w[o+8*wrb:o+16*wrb])
		k.Interleave(LayoutCol16, w16[o:o+16*wrb], w[o:o+16*wrb])
	}
	x, _ := memDecodeToken(b, k, r)
	out := [2][]float32{make([]float32, total), make([]float32, total)}
	meter := hugeBuf(b, len(w))
	clear(meter)
	ones := make([]float32, 4096)
	for i := range ones {
		ones[i] = 1
	}
	s := newSpin2()
	defer s.quit.Store(true)
	pass := func(kern func(worker, lo, hi, base int)) { memPass(s, mats, mrows, kern) }
	var o8 [2][8]float32
	var o16 [2][16]float32
	var sink [2]float32
	fl := unsafe.Slice((*float32)(unsafe.Pointer(&meter[0])), len(meter)/4)
	half := len(fl) / 2 / 4096 * 4096
	nb := n / 256
	vs := []memVariant{
		{"meter", 2 * half * 4, func() {
			s.run(func(worker int) {
				part := fl[worker*half : (worker+1)*half]
				for i := 0; i < len(part); i += 4096 {
					sink[worker] += VecDotF32(part[i:i+4096], ones)
				}
			})
		}},
		{"x8", len(w8), func() {
			pass(func(worker, lo, hi, base int) {
				for i := base + lo; i < base+hi; i += 8 {
					k.Dot8RowsX8(w8[i*wrb:(i+8)*wrb], x, nil, &o8[worker])
					copy(out[0][i:], o8[worker][:])
				}
			})
		}},
	}
	pf, kern := &c16PrefetchQ4K, rows16C16Q4KAVX512
	if typ == gguf.TypeQ6_K {
		pf, kern = &c16PrefetchQ6K, rows16C16Q6KAVX512
	}
	for _, d := range []int{0, 384, 768, 1152, 1536, 2304, 4608} {
		vs = append(vs, memVariant{fmt.Sprintf("c16pf%d", d), len(w16), func() {
			*pf = d
			pass(func(worker, lo, hi, base int) {
				for i := base + lo; i < base+hi; i += 16 {
					kern(&w16[i*wrb], &x[0], nb, &o16[worker])
					copy(out[1][i:], o16[worker][:])
				}
			})
		}})
	}
	defer func(v int) { *pf = v }(*pf)
	for b.Loop() {
		memRounds(b, vs)
	}
	for i := range out[0] {
		if out[0][i] != out[1][i] {
			b.Fatalf("row %d: x8 %g, c16 %g", i, out[0][i], out[1][i])
		}
	}
}
