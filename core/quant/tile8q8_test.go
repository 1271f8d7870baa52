package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TestTile8Q8_0AbsForms: Q8_0's sixteen-token kernels on tile8Abs tiles
// (the quad kernel where the level has one, else the pairs) give every
// (row, token) the one-token generic bits in both of their forms: rows
// without a −128 quant (|x| against w·sign(x)) and rows with one planted
// against a negative activation (the scan sends the quad to the |w| form's
// pairs). The scan's flag is checked against the planted quants. Random
// weight bytes hold 0x80 in nearly every row, so the other tile tests run
// the |w| form; this one runs both, at each level with tile8Abs tiles.
func TestTile8Q8_0AbsForms(t *testing.T) {
	gen := genericKernels()
	typ := gguf.TypeQ8_0
	ran := false
	for _, lvl := range Levels() {
		restore := ForceLevel(lvl)
		k, err := NewKernel(typ, 32)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		if k.t8.tileBlock != tile8AbsBlock {
			continue // this level's Q8_0 tiles are tile8Block's
		}
		ran = true
		for _, n := range twinSizes(typ)[1:] {
			for kind := edgeRandom; kind <= edgeMixed; kind++ {
				for _, plant := range []bool{false, true} {
					func() {
						defer ForceLevel(lvl)()
						k, err := NewKernel(typ, n)
						if err != nil {
							t.Fatal(err)
						}
						r := rand.New(rand.NewPCG(uint64(n)+77, uint64(kind)))
						wrb, xrb := k.WeightRowBytes(), k.ActRowBytes()
						var w4 []byte
						for i := 0; i < 4; i++ {
							wi, _ := twinRows(t, r, typ, n, kind)
							for b := 0; b < n/qk; b++ {
								for j := 2 + b*bytesQ80; j < (b+1)*bytesQ80; j++ {
									if wi[j] == 0x80 {
										wi[j] = 0x81
									}
								}
							}
							w4 = append(w4, wi...)
						}
						xs := make([]byte, 0, 16*xrb)
						for i := 0; i < 16; i++ {
							_, x := twinRows(t, r, typ, n, kind)
							xs = append(xs, x...)
						}
						if plant {
							// A −128 weight quant of row 1 (the pair's second
							// row) and row 2 against negative quants of tokens
							// 3 and 12.
							b, j := r.IntN(n/qk), r.IntN(qk)
							w4[wrb+b*bytesQ80+2+j] = 0x80
							w4[2*wrb+b*bytesQ80+2+j] = 0x80
							for _, tok := range []int{3, 12} {
								xs[tok*xrb+b*bytesQ80+2+j] = byte(0x100 - 1 - r.IntN(127)) // −1..−127
								put16(xs[tok*xrb+b*bytesQ80:], F32ToF16(0.05))
							}
						}
						u := make([]byte, k.Prep4Bytes())
						k.Prep4(w4, u)
						if want := byte(0); plant {
							if u[0] != 1 {
								t.Fatalf("%s n=%d kind %d: scan flag %d with a planted −128", lvl, n, kind, u[0])
							}
						} else if u[0] != want {
							t.Fatalf("%s n=%d kind %d: scan flag %d without a −128", lvl, n, kind, u[0])
						}
						ug := make([]byte, len(u))
						gen.scan4Q8_0(w4, wrb, ug)
						if string(u) != string(ug) {
							t.Fatalf("%s n=%d kind %d: scan %v, Go twin %v", lvl, n, kind, u, ug)
						}
						tb := k.Tile8Bytes()
						tiles := make([]byte, 2*tb)
						k.PackTile8(xs, tiles[:tb])
						k.PackTile8(xs[8*xrb:], tiles[tb:])
						out := make([]float32, 64)
						k.Dot4RowsTiles8(w4, u, tiles, 2, out)
						for g := 0; g < 2; g++ {
							for i := 0; i < 4; i++ {
								for tok := 0; tok < 8; tok++ {
									x := xs[(8*g+tok)*xrb : (8*g+tok+1)*xrb]
									want := gen.dotQ8_0Q8_0(w4[i*wrb:(i+1)*wrb], x)
									if got := out[32*g+8*i+tok]; !sameBits(got, want) {
										t.Fatalf("%s n=%d kind %d plant %v: tile %d row %d token %d = %g, generic %g", lvl, n, kind, plant, g, i, tok, got, want)
									}
								}
							}
						}
					}()
				}
			}
		}
	}
	if !ran {
		t.Skip("no level here keeps Q8_0 tiles in the tile8Abs form")
	}
}

// genTile8For is the generic level's tile kernel for typ on the tiles k
// packs: the tile8Abs twins where k's level keeps Q8_0's magnitudes.
func genTile8For(gen *kernelSet, typ gguf.GGMLType, k *Kernel) tile8Kernel {
	if typ == gguf.TypeQ8_0 && k.t8.tileBlock == tile8AbsBlock {
		g := *gen
		g.tile8Q8_0Abs = true
		return g.tile8For(typ)
	}
	if typ == gguf.TypeQ4_0 && k.t8.prepBlock == prep4Q4_0S {
		g := *gen
		g.unpack4Q4_0S = unpack4Q4_0SGeneric
		return g.tile8For(typ)
	}
	if typ == gguf.TypeQ8_0 && k.t8.prep != nil {
		g := *gen
		g.bias4Q8_0 = bias4Q8_0Generic
		return g.tile8For(typ)
	}
	return gen.tile8For(typ)
}

// TestAbs4: abs4 is each byte's magnitude for every byte value, in every
// position, beside other bytes.
func TestAbs4(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for b := 0; b < 256; b++ {
		for pos := 0; pos < 4; pos++ {
			v := r.Uint32()&^(0xff<<(8*pos)) | uint32(b)<<(8*pos)
			got := abs4(v)
			for i := 0; i < 4; i++ {
				q := int8(v >> (8 * i))
				want := uint8(q)
				if q < 0 {
					want = uint8(-int16(q))
				}
				if g := uint8(got >> (8 * i)); g != want {
					t.Fatalf("abs4(%#08x) byte %d = %#x, want %#x", v, i, g, want)
				}
			}
		}
	}
}

// TestRowsFree: RowsFree finds a single −128 quant anywhere in a weight
// and nothing in clean rows; Prep4Free of clean rows leaves what Prep4
// leaves; kernels that do not scan report false.
func TestRowsFree(t *testing.T) {
	for _, lvl := range Levels() {
		func() {
			defer ForceLevel(lvl)()
			k, err := NewKernel(gguf.TypeQ8_0, 256)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(9, 10))
			w := make([]byte, 12*k.WeightRowBytes())
			for i := range w {
				if w[i] = byte(r.Uint32()); w[i] == 0x80 {
					w[i] = 0x7f
				}
			}
			u := make([]byte, k.Prep4Bytes())
			if !k.ScansRows() {
				if k.RowsFree(w, u) {
					t.Fatalf("%s: RowsFree true for a kernel that does not scan", lvl)
				}
				return
			}
			if !k.RowsFree(w, u) {
				t.Fatalf("%s: clean rows not free", lvl)
			}
			u2 := make([]byte, len(u))
			k.Prep4(w[4*k.WeightRowBytes():8*k.WeightRowBytes()], u)
			u2[0] = 7
			k.Prep4Free(w[4*k.WeightRowBytes():8*k.WeightRowBytes()], u2)
			if u[0] != u2[0] {
				t.Fatalf("%s: Prep4Free flag %d, Prep4 %d", lvl, u2[0], u[0])
			}
			for _, row := range []int{0, 5, 11} {
				b, j := r.IntN(256/qk), r.IntN(qk)
				off := row*k.WeightRowBytes() + b*bytesQ80 + 2 + j
				w[off] = 0x80
				if k.RowsFree(w, u) {
					t.Fatalf("%s: −128 in row %d not found", lvl, row)
				}
				w[off] = 0x81
			}
		}()
	}
	k, err := NewKernel(gguf.TypeQ4_0, 256)
	if err != nil {
		t.Fatal(err)
	}
	if k.ScansRows() || k.RowsFree(make([]byte, 4*k.WeightRowBytes()), make([]byte, k.Prep4Bytes())) {
		t.Fatal("Q4_0 scans or is free")
	}
}
