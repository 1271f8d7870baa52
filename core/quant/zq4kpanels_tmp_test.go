//go:build linux && amd64 && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TEMPORARY (s18b): Q4_K c16 gate vs down shape from memory, one group a call vs
// DotGroups4 in panels of P columns, each thread its half of each matrix.
func BenchmarkZQ4KPanels(b *testing.B) {
	s := newSpin2()
	defer s.quit.Store(true)
	var vs []memVariant
	r := rand.New(rand.NewPCG(1, 2))
	type shape struct{ n, rows int }
	var o64 [2][64]float32
	typ := gguf.TypeQ4_K
	for _, sh := range []shape{{2048, 5632}, {5632, 2048}} {
		k, err := NewKernel(typ, sh.n)
		if err != nil {
			b.Fatal(err)
		}
		wrb := k.WeightRowBytes()
		mats := 400e6 / (sh.rows * wrb)
		total := mats * sh.rows
		src := make([]byte, 0, 16*wrb)
		for len(src) < 16*wrb {
			src = append(src, quantizeWeights(b, typ, gaussian(r, sh.n, 0.02))...)
		}
		x := quantizeRow(b, VecDotType(typ), gaussian(r, sh.n, 1))
		wc := hugeBuf(b, total*wrb)
		for o := 0; o+16*wrb <= len(wc); o += 16 * wrb {
			k.Interleave(LayoutCol16, wc[o:o+16*wrb], src)
		}
		name := typ.String() + map[int]string{2048: "-gate", 5632: "-down"}[sh.n]
		mrows := sh.rows
		half := mrows / 2
		one := func(worker, base int) {
			for i := base + worker*half; i < base+(worker+1)*half; i += 16 {
				k.DotGroup(LayoutCol16, wc[i*wrb:(i+16)*wrb], x, nil, o64[worker][:16])
			}
		}
		vs = append(vs, memVariant{name, mats * mrows * wrb, func() {
			for m := 0; m < mats; m++ {
				s.run(func(worker int) { one(worker, m*mrows) })
			}
		}})
		for _, p := range []int{1, 2, 4, 8} {
			p := p
			x4 := func(worker, base int) {
				for i := base + worker*half; i+64 <= base+(worker+1)*half; i += 64 {
					rows16C16x4Q4KPanelsP(wc[i*wrb:(i+64)*wrb], 16*wrb, x, p, &o64[worker])
				}
			}
			vs = append(vs, memVariant{fmt.Sprintf("%s-x4p%d", name, p), mats * mrows * wrb, func() {
				for m := 0; m < mats; m++ {
					s.run(func(worker int) { x4(worker, m*mrows) })
				}
			}})
		}
	}
	vs = append(vs, meterVariant(b, s, 400e6))
	for b.Loop() {
		memRounds(b, vs)
	}
}

func rows16C16x4Q4KPanelsP(w []byte, stride int, x []byte, p int, out *[64]float32) {
	nb := stride / c16ColQ4K
	*out = [64]float32{}
	for j := 0; j < nb; j += p {
		n := min(p, nb-j)
		for g := 0; g < 4; g++ {
			rows16C16Q4KAVX512(&w[g*stride+j*c16ColQ4K], &x[j*bytesQ8K], n, (*[16]float32)(out[16*g:16*g+16]))
		}
	}
}

// TEMPORARY (s18b): Q6_K x8 gate vs down shape from memory, one group a call vs
// four groups in panels of P super-blocks.
func BenchmarkZQ6KPanels(b *testing.B) {
	s := newSpin2()
	defer s.quit.Store(true)
	var vs []memVariant
	r := rand.New(rand.NewPCG(1, 2))
	type shape struct{ n, rows int }
	var o32 [2][32]float32
	typ := gguf.TypeQ6_K
	defer func(p int) { k8PanelQ6K = p }(k8PanelQ6K)
	for _, sh := range []shape{{2048, 5632}, {5632, 2048}} {
		k, err := NewKernel(typ, sh.n)
		if err != nil {
			b.Fatal(err)
		}
		wrb := k.WeightRowBytes()
		mats := 400e6 / (sh.rows * wrb)
		total := mats * sh.rows
		src := make([]byte, 0, 8*wrb)
		for len(src) < 8*wrb {
			src = append(src, quantizeWeights(b, typ, gaussian(r, sh.n, 0.02))...)
		}
		x := quantizeRow(b, VecDotType(typ), gaussian(r, sh.n, 1))
		wc := hugeBuf(b, total*wrb)
		for o := 0; o+8*wrb <= len(wc); o += 8 * wrb {
			k.Interleave(LayoutX8, wc[o:o+8*wrb], src)
		}
		name := typ.String() + map[int]string{2048: "-gate", 5632: "-down"}[sh.n]
		mrows := sh.rows
		half := mrows / 2
		one := func(worker, base int) {
			for i := base + worker*half; i < base+(worker+1)*half; i += 8 {
				k.DotGroup(LayoutX8, wc[i*wrb:(i+8)*wrb], x, nil, o32[worker][:8])
			}
		}
		vs = append(vs, memVariant{name, mats * mrows * wrb, func() {
			for m := 0; m < mats; m++ {
				s.run(func(worker int) { one(worker, m*mrows) })
			}
		}})
		for _, p := range []int{1, 2, 4, 100} {
			p := p
			x4 := func(worker, base int) {
				for i := base + worker*half; i+32 <= base+(worker+1)*half; i += 32 {
					rows8X8x4Q6KPanels(wc[i*wrb:(i+32)*wrb], 8*wrb, x, nil, &o32[worker])
				}
			}
			vs = append(vs, memVariant{fmt.Sprintf("%s-x4p%d", name, p), mats * mrows * wrb, func() {
				k8PanelQ6K = p
				for m := 0; m < mats; m++ {
					s.run(func(worker int) { x4(worker, m*mrows) })
				}
			}})
		}
	}
	vs = append(vs, meterVariant(b, s, 400e6))
	for b.Loop() {
		memRounds(b, vs)
	}
}
