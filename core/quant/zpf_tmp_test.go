//go:build linux && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

func zpfSetup(t testing.TB, n int) ([]byte, []byte, []byte) {
	k, _ := NewKernel(gguf.TypeQ4_0, n)
	r := rand.New(rand.NewPCG(1, 2))
	var src []byte
	for i := 0; i < 16; i++ {
		src = append(src, quantizeWeights(t, gguf.TypeQ4_0, gaussian(r, n, 0.02))...)
	}
	x := quantizeRow(t, VecDotType(gguf.TypeQ4_0), gaussian(r, n, 1))
	tab := make([]byte, k.Token1TableBytes())
	k.PrepareToken1(x, tab)
	return src, x, tab
}

func TestZPFSame(t *testing.T) {
	for _, n := range []int{32, 2048, 5632} {
		k, _ := NewKernel(gguf.TypeQ4_0, n)
		src, x, tab := zpfSetup(t, n)
		col := make([]byte, len(src))
		k.Interleave(LayoutCol16, col, src)
		var a, b, c [16]float32
		q4_0q8_0r16c16GFNI(&col[0], &x[0], n/32, &tab[0], &a)
		zq40T2(&col[0], &x[0], n/32, &tab[0], &b)
		zq40T2T0(&col[0], &x[0], n/32, &tab[0], &c)
		if a != b || a != c {
			t.Fatalf("n %d", n)
		}
	}
}

func BenchmarkZPFMem(b *testing.B) {
	for _, sh := range []struct {
		name    string
		n, rows int
	}{{"gate", 2048, 5632}, {"down", 5632, 2048}} {
		k, err := NewKernel(gguf.TypeQ4_0, sh.n)
		if err != nil {
			b.Fatal(err)
		}
		wrb := k.WeightRowBytes()
		mats := 400e6 / (sh.rows * wrb)
		total := sh.rows * mats
		src, x, tab := zpfSetup(b, sh.n)
		wc := hugeBuf(b, total*wrb)
		for o := 0; o+16*wrb <= len(wc); o += 16 * wrb {
			k.Interleave(LayoutCol16, wc[o:o+16*wrb], src)
		}
		s := newSpin2()
		var o16 [2][16]float32
		nb := sh.n / 32
		mk := func(name string, near, far int, f func(w *byte, x *byte, nb int, tab *byte, out *[16]float32)) memVariant {
			return memVariant{name, len(wc), func() {
				zpfNear, zpfFar = near, far
				memPass(s, mats, sh.rows, func(worker, lo, hi, base int) {
					for i := base + lo; i < base+hi; i += 16 {
						f(&wc[i*wrb], &x[0], nb, &tab[0], &o16[worker])
					}
				})
			}}
		}
		vs := []memVariant{meterVariant(b, s, len(wc)), mk("main", 0, 0, q4_0q8_0r16c16GFNI)}
		for _, far := range []int{4608, 9216, 18432} {
			vs = append(vs, mk(fmt.Sprintf("t2_%d", far), 0, far, zq40T2))
		}
		for _, far := range []int{9216, 18432} {
			vs = append(vs, mk(fmt.Sprintf("t2_%d+t0", far), 4608, far, zq40T2T0))
		}
		b.Run(sh.name, func(b *testing.B) {
			for b.Loop() {
				memRounds(b, vs)
			}
		})
		s.quit.Store(true)
	}
}
