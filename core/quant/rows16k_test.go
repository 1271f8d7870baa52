package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// c16Case makes sixteen random rows of typ (Q4_K or Q6_K) of n columns
// (file layout) and a Q8_K token; edge: zero super-blocks, large weights,
// and random bytes in every third super-block (every scale, min and quant
// bit pattern; d kept).
func c16Case(t testing.TB, r *rand.Rand, typ gguf.GGMLType, n int, edge bool) (file, x []byte) {
	t.Helper()
	k, err := NewKernel(typ, n)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float32, 16*n)
	for i := range w {
		w[i] = float32(r.NormFloat64())
		if edge && (i/256)%3 == 1 {
			w[i] = 0
		}
		if edge && i%97 == 0 {
			w[i] *= 1e4
		}
	}
	file = make([]byte, 16*k.WeightRowBytes())
	if err := QuantizeWeights(typ, w, file); err != nil {
		t.Fatal(err)
	}
	if edge {
		bs, lo, hi := bytesQ4K, 4, bytesQ4K // Q4_K: scales and quants after d, dmin
		if typ == gguf.TypeQ6_K {
			bs, lo, hi = bytesQ6K, 0, 208 // Q6_K: ql, qh, scales before d
		}
		for i := 0; i < len(file); i += 3 * bs {
			for b := lo; b < hi; b++ {
				file[i+b] = byte(r.Uint32())
			}
		}
	}
	xf := make([]float32, n)
	for i := range xf {
		xf[i] = float32(r.NormFloat64())
	}
	x = make([]byte, k.ActRowBytes())
	if err := QuantizeRow(gguf.TypeQ8_K, xf, x); err != nil {
		t.Fatal(err)
	}
	return file, x
}

// c16Q4KCase and c16Q6KCase are c16Case for one type.
func c16Q4KCase(t testing.TB, r *rand.Rand, n int, edge bool) (file, x []byte) {
	return c16Case(t, r, gguf.TypeQ4_K, n, edge)
}

func c16Q6KCase(t testing.TB, r *rand.Rand, n int, edge bool) (file, x []byte) {
	return c16Case(t, r, gguf.TypeQ6_K, n, edge)
}

// TestC16KByLevel: through the Kernel's layout methods at every level, a
// Q4_K (Q6_K) weight's c16 groups round-trip (Interleave, Deinterleave),
// give each row its Dot bits (DotGroup, DotGroupRow), and prepare each row
// quad for the tile kernels as Prep4 does on the file rows (PrepGroup,
// where the level has it); the kernel takes c16 at the AVX-512 level, x8
// at the AVX2 one, the file layout at the generic one.
func TestC16KByLevel(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, c := range []struct {
		typ  gguf.GGMLType
		mk   func(testing.TB, *rand.Rand, int, bool) ([]byte, []byte)
		move func(file, c16 []byte, nb int, toC16 bool)
	}{{gguf.TypeQ4_K, c16Q4KCase, c16Q4K.move}, {gguf.TypeQ6_K, c16Q6KCase, c16Q6K.move}} {
		for _, lvl := range Levels() {
			for _, n := range []int{256, 1280, 4096} {
				restore := ForceLevel(lvl)
				k, err := NewKernel(c.typ, n)
				restore()
				if err != nil {
					t.Fatal(err)
				}
				want := LayoutFile
				switch {
				case lvl == AVX512:
					want = LayoutCol16
				case k.HasX8():
					want = LayoutX8
				}
				if got := k.Layout(); got != want {
					t.Errorf("%s %s: layout %s, want %s", c.typ, lvl, got, want)
				}
				if !k.Has(LayoutCol16) {
					t.Fatalf("%s %s: no col16 layout", c.typ, lvl)
				}
				wrb := k.WeightRowBytes()
				for _, edge := range []bool{false, true} {
					file, x := c.mk(t, r, n, edge)
					g := make([]byte, len(file))
					k.Interleave(LayoutCol16, g, file)
					ref := make([]byte, len(file))
					c.move(file, ref, n/256, true)
					if string(g) != string(ref) {
						t.Fatalf("%s %s n=%d: Interleave is not the c16 layout", c.typ, lvl, n)
					}
					back := make([]byte, len(file))
					k.Deinterleave(LayoutCol16, back, g)
					if string(back) != string(file) {
						t.Fatalf("%s %s n=%d: Deinterleave(Interleave(w)) != w", c.typ, lvl, n)
					}
					var out [16]float32
					k.DotGroup(LayoutCol16, g, x, nil, out[:])
					for i := range out {
						want := k.Dot(file[i*wrb:(i+1)*wrb], x)
						if !sameBits(out[i], want) {
							t.Fatalf("%s %s n=%d edge=%v row %d: DotGroup %g, Dot %g", c.typ, lvl, n, edge, i, out[i], want)
						}
						if got := k.DotGroupRow(LayoutCol16, g, i, x); !sameBits(got, want) {
							t.Fatalf("%s %s n=%d row %d: DotGroupRow %g, Dot %g", c.typ, lvl, n, i, got, want)
						}
					}
					if k.HasPrepGroup(LayoutCol16) {
						pb := k.Prep4Bytes()
						u, want := make([]byte, pb), make([]byte, pb)
						for q := 0; q < 4; q++ {
							k.Prep4(file[4*q*wrb:(4*q+4)*wrb], want)
							clear(u)
							k.PrepGroup(LayoutCol16, g, q, u)
							if string(u) != string(want) {
								t.Fatalf("%s %s n=%d quad %d: PrepGroup differs from Prep4 on the file rows", c.typ, lvl, n, q)
							}
						}
					} else if lvl == AVX512 {
						t.Errorf("%s %s: no c16 preparation for the tile kernels", c.typ, lvl)
					}
				}
			}
		}
	}
}
