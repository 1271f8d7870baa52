package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// q6KExtremeRows builds rows Q6_K rows and tokens Q8_K rows of n elements
// whose blocks are, at random, random bytes or one of the extremes of the
// Q6_K tile kernel's integer ranges: every weight −32 (all quant bits
// zero) or 31, scales −128 or 127, activation quants −128 or 127
// (including −128, which twinRows avoids for the sign-trick kernels) and
// the largest d. bsums are consistent.
func q6KExtremeRows(t testing.TB, r *rand.Rand, rows, tokens, n int) (w, x []byte) {
	for i := 0; i < rows; i++ {
		wr := randomWeightBytes(t, r, gguf.TypeQ6_K, n)
		for b := 0; b < n/qkK; b++ {
			wb := wr[b*bytesQ6K : (b+1)*bytesQ6K]
			switch r.IntN(4) {
			case 0: // w = −32 everywhere, scales ±extreme
				clear(wb[:192])
			case 1: // w = 31 everywhere
				for j := range wb[:192] {
					wb[j] = 0xff
				}
			}
			if r.IntN(2) == 0 {
				for j := 192; j < 208; j++ {
					wb[j] = []byte{0x80, 0x7f}[r.IntN(2)]
				}
			}
			if r.IntN(4) == 0 {
				put16(wb[208:], 0x7bff^uint16(r.IntN(2))<<15)
			}
		}
		w = append(w, wr...)
	}
	for i := 0; i < tokens; i++ {
		xr := make([]byte, n/qkK*bytesQ8K)
		for b := 0; b < n/qkK; b++ {
			xb := xr[b*bytesQ8K : (b+1)*bytesQ8K]
			putF32(xb, float32(r.NormFloat64()*0.01))
			mode := r.IntN(4)
			for j := 4; j < 260; j++ {
				switch mode {
				case 0:
					xb[j] = 0x80
				case 1:
					xb[j] = 0x7f
				default:
					xb[j] = byte(r.Uint32())
				}
			}
			fixBsums(xb)
		}
		x = append(x, xr...)
	}
	return w, x
}

// TestQ6KTilesAndRowsFullRange: the Q6_K tile kernels (one to three tiles
// per call, so the two-row sixteen-token kernel and the four-row one) and
// the four-row decode kernel give every (row, token) the one-token generic
// bits at the ends of their integer ranges, at every level.
func TestQ6KTilesAndRowsFullRange(t *testing.T) {
	gen := genericKernels()
	for _, lvl := range Levels() {
		for _, n := range []int{256, 512, 256 * 5} {
			func() {
				defer ForceLevel(lvl)()
				k, err := NewKernel(gguf.TypeQ6_K, n)
				if err != nil {
					t.Fatal(err)
				}
				wrb, xrb := k.WeightRowBytes(), k.ActRowBytes()
				r := rand.New(rand.NewPCG(uint64(n), 66))
				for rep := 0; rep < 6; rep++ {
					tiles := 1 + rep%3
					w4, xs := q6KExtremeRows(t, r, 4, 8*tiles, n)
					want := func(row, tok int) float32 {
						return gen.dotQ6_KQ8_K(w4[row*wrb:(row+1)*wrb], xs[tok*xrb:(tok+1)*xrb])
					}
					for tok := 0; tok < 8*tiles; tok++ {
						var rows [4]float32
						k.Dot4Rows(w4, xs[tok*xrb:(tok+1)*xrb], &rows)
						for i := range rows {
							if !sameBits(rows[i], want(i, tok)) {
								t.Fatalf("%s n=%d rep %d: Dot4Rows row %d token %d = %g, generic %g", lvl, n, rep, i, tok, rows[i], want(i, tok))
							}
						}
					}
					tb := k.Tile8Bytes()
					if tb == 0 {
						continue // no tile form at this level
					}
					buf := make([]byte, tiles*tb)
					for g := 0; g < tiles; g++ {
						k.PackTile8(xs[8*g*xrb:], buf[g*tb:(g+1)*tb])
					}
					u := make([]byte, k.Prep4Bytes())
					k.Prep4(w4, u)
					out := make([]float32, 32*tiles)
					k.Dot4RowsTiles8(w4, u, buf, tiles, out)
					for g := 0; g < tiles; g++ {
						for i := 0; i < 4; i++ {
							for tok := 0; tok < 8; tok++ {
								if got, w := out[32*g+8*i+tok], want(i, 8*g+tok); !sameBits(got, w) {
									t.Fatalf("%s n=%d rep %d tiles %d: tile %d row %d token %d = %g, generic %g", lvl, n, rep, tiles, g, i, tok, got, w)
								}
							}
						}
					}
				}
			}()
		}
	}
}

// BenchmarkQ6KPrefillRows compares, for four Q6_K rows of n = 4096 and 16
// tokens, the tile path (prepare the rows, two tiles per call) with the
// four-token path it replaces (Dot4 per row and group of four), per
// level; MB/s counts the weight bytes once per call.
func BenchmarkQ6KPrefillRows(b *testing.B) {
	r := rand.New(rand.NewPCG(61, 62))
	const n = 4096
	for _, lvl := range Levels() {
		restore := ForceLevel(lvl)
		k, err := NewKernel(gguf.TypeQ6_K, n)
		restore()
		if err != nil {
			b.Fatal(err)
		}
		wrb, xrb := k.WeightRowBytes(), k.ActRowBytes()
		var w, xs []byte
		for i := 0; i < 4; i++ {
			w = append(w, quantizeWeights(b, gguf.TypeQ6_K, gaussian(r, n, 0.02))...)
		}
		for i := 0; i < 16; i++ {
			xs = append(xs, quantizeRow(b, gguf.TypeQ8_K, gaussian(r, n, 1))...)
		}
		b.Run(lvl.String()+"/Dot4", func(b *testing.B) {
			var o [4]float32
			b.SetBytes(int64(4 * wrb))
			for b.Loop() {
				for i := 0; i < 4; i++ {
					for g := 0; g < 4; g++ {
						k.Dot4(w[i*wrb:(i+1)*wrb], xs[4*g*xrb:4*(g+1)*xrb], &o)
					}
				}
			}
		})
		tb := k.Tile8Bytes()
		if tb == 0 {
			continue
		}
		tiles := make([]byte, 2*tb)
		k.PackTile8(xs, tiles[:tb])
		k.PackTile8(xs[8*xrb:], tiles[tb:])
		u := make([]byte, k.Prep4Bytes())
		out := make([]float32, 64)
		b.Run(lvl.String()+"/tile", func(b *testing.B) {
			b.SetBytes(int64(4 * wrb))
			for b.Loop() {
				k.Prep4(w, u)
				k.Dot4RowsTiles8(w, u, tiles, 2, out)
			}
		})
		b.Run(lvl.String()+"/pack", func(b *testing.B) {
			b.SetBytes(int64(8 * xrb))
			for b.Loop() {
				k.PackTile8(xs, tiles[:tb])
			}
		})
	}
}

// BenchmarkMatVecDRAM runs a whole output-head-sized matrix (32000 × 2048:
// 54 MB for Q6_K, 37 MB for Q4_K, from memory, not cache) against one
// token, the way a decode mat-vec does: four rows per Dot4Rows call and
// one row per Dot call, at each level; MB/s counts the weight bytes.
func BenchmarkMatVecDRAM(b *testing.B) {
	const rows, n = 32000, 2048
	for _, typ := range []gguf.GGMLType{gguf.TypeQ6_K, gguf.TypeQ4_K} {
		r := rand.New(rand.NewPCG(71, 72))
		k, err := NewKernel(typ, n)
		if err != nil {
			b.Fatal(err)
		}
		wrb := k.WeightRowBytes()
		w := repeatedRows(b, r, typ, n, wrb, rows)
		x := quantizeRow(b, VecDotType(typ), gaussian(r, n, 1))
		out := make([]float32, rows)
		for _, lvl := range Levels() {
			restore := ForceLevel(lvl)
			k, _ := NewKernel(typ, n)
			restore()
			var o [4]float32
			b.Run(lvl.String()+"/"+typ.String()+"/Dot4Rows", func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					for i := 0; i < rows; i += 4 {
						k.Dot4Rows(w[i*wrb:(i+4)*wrb], x, &o)
						copy(out[i:i+4], o[:])
					}
				}
			})
			b.Run(lvl.String()+"/"+typ.String()+"/Dot", func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					for i := 0; i < rows; i++ {
						out[i] = k.Dot(w[i*wrb:(i+1)*wrb], x)
					}
				}
			})
		}
	}
}
