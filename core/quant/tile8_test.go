package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TestTile8MatchesGeneric: the four-row eight-token kernels give every
// (row, token) pair the bits of the one-token generic kernel on that pair's
// rows, on random and edge rows, with rows not adjacent, at every level;
// the Go twin of the tile kernel is checked the same way.
// tileLevel reports whether level l must have the eight-token tile
// kernels: the Go twins and the x86 levels do; the arm64 levels drop them
// for the four-token path (kernelSet.noTiles).
func tileLevel(l Level) bool { return l == Generic || l.HasAVX2() }

func TestTile8MatchesGeneric(t *testing.T) {
	gen := genericKernels()
	for _, lvl := range Levels() {
		for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
			one := map[gguf.GGMLType]func(w, x []byte) float32{
				gguf.TypeQ4_0: gen.dotQ4_0Q8_0, gguf.TypeQ8_0: gen.dotQ8_0Q8_0, gguf.TypeQ4_K: gen.dotQ4_KQ8_K,
				gguf.TypeQ6_K: gen.dotQ6_KQ8_K,
			}[typ]
			for _, n := range twinSizes(typ) {
				for kind := edgeRandom; kind <= edgeMixed; kind++ {
					func() {
						defer ForceLevel(lvl)()
						k, err := NewKernel(typ, n)
						if err != nil {
							t.Fatal(err)
						}
						if !k.HasTile8() {
							if tileLevel(lvl) {
								t.Fatalf("%s %s: no tile kernel", lvl, typ)
							}
							return // arm64 levels take the four-token path
						}
						if k.Tile8Bytes() != n/k.t8.qk*k.t8.tileBlock || k.Tile8Bytes() == 0 && n > 0 {
							t.Fatalf("%s %s: Tile8Bytes %d", lvl, typ, k.Tile8Bytes())
						}
						r := rand.New(rand.NewPCG(uint64(n)+5, uint64(kind)))
						for rep := 0; rep < 4; rep++ {
							var ws [4][]byte
							xs := make([]byte, 0, 8*k.ActRowBytes())
							for i := range ws {
								ws[i], _ = twinRows(t, r, typ, n, kind)
							}
							for i := 0; i < 8; i++ {
								_, x := twinRows(t, r, typ, n, kind)
								xs = append(xs, x...)
							}
							stride := k.WeightRowBytes() + 18*3 // rows need not be adjacent
							buf := make([]byte, 3*stride+k.WeightRowBytes())
							for i := range ws {
								copy(buf[i*stride:], ws[i])
							}
							tile := make([]byte, k.Tile8Bytes())
							k.PackTile8(xs, tile)
							// The weight preparation at this level and in Go.
							var u, ug []byte
							gt := genTile8For(gen, typ, &k)
							genDot, genPrep := gt.dot, gt.prep
							if k.t8.prep != nil {
								u = make([]byte, k.Prep4Bytes())
								ug = make([]byte, k.Prep4Bytes())
								k.t8.prep(buf, stride, u)
								genPrep(buf, stride, ug)
								if string(u) != string(ug) {
									t.Fatalf("%s %s n=%d kind %d: unpacked rows differ from the Go twin's", lvl, typ, n, kind)
								}
							}
							var out, twin [32]float32
							k.t8.dot(buf, stride, u, tile, &out)
							genDot(buf, stride, ug, tile, &twin)
							for i := range ws {
								for tok := 0; tok < 8; tok++ {
									x := xs[tok*k.ActRowBytes() : (tok+1)*k.ActRowBytes()]
									want := one(ws[i], x)
									if got := out[8*i+tok]; !sameBits(got, want) {
										t.Fatalf("%s %s n=%d kind %d rep %d row %d token %d: tile %g, generic %g", lvl, typ, n, kind, rep, i, tok, got, want)
									}
									if !sameBits(twin[8*i+tok], want) {
										t.Fatalf("%s %s n=%d kind %d rep %d row %d token %d: Go tile twin %g, generic %g", lvl, typ, n, kind, rep, i, tok, twin[8*i+tok], want)
									}
								}
							}
							if stride == k.WeightRowBytes() {
								continue
							}
							// Adjacent rows through the Kernel method.
							w4 := append(append(append(append([]byte(nil), ws[0]...), ws[1]...), ws[2]...), ws[3]...)
							u2 := make([]byte, k.Prep4Bytes())
							k.Prep4(w4, u2)
							var o2 [32]float32
							k.Dot4RowsTile8(w4, u2, tile, &o2)
							for i := range o2 {
								if !sameBits(o2[i], out[i]) {
									t.Fatalf("%s %s n=%d: Dot4RowsTile8 differs from the strided call at %d", lvl, typ, n, i)
								}
							}
						}
					}()
				}
			}
		}
	}
}

// BenchmarkTile8 measures four weight rows against an eight-token tile per
// level; ns/op over 32 outputs of n = 4096 (MB/s counts weight bytes).
func BenchmarkTile8(b *testing.B) {
	r := rand.New(rand.NewPCG(41, 42))
	const n = 4096
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		for _, lvl := range Levels() {
			restore := ForceLevel(lvl)
			k, err := NewKernel(typ, n)
			restore()
			if err != nil {
				b.Fatal(err)
			}
			if !k.HasTile8() {
				continue
			}
			w := make([]byte, 0, 4*k.WeightRowBytes())
			xs := make([]byte, 0, 8*k.ActRowBytes())
			for i := 0; i < 4; i++ {
				w = append(w, quantizeWeights(b, typ, gaussian(r, n, 0.02))...)
			}
			for i := 0; i < 8; i++ {
				xs = append(xs, quantizeRow(b, VecDotType(typ), gaussian(r, n, 1))...)
			}
			tile := make([]byte, k.Tile8Bytes())
			k.PackTile8(xs, tile)
			u := make([]byte, k.Prep4Bytes())
			k.Prep4(w, u)
			var out [32]float32
			b.Run(lvl.String()+"/"+typ.String(), func(b *testing.B) {
				b.SetBytes(int64(4 * k.WeightRowBytes()))
				for b.Loop() {
					k.Dot4RowsTile8(w, u, tile, &out)
				}
			})
			if len(u) > 0 {
				b.Run(lvl.String()+"/"+typ.String()+"/prep", func(b *testing.B) {
					b.SetBytes(int64(4 * k.WeightRowBytes()))
					for b.Loop() {
						k.Prep4(w, u)
					}
				})
			}
			// Two tiles in one call (the sixteen-token kernels).
			tiles := append(append([]byte(nil), tile...), tile...)
			out2 := make([]float32, 64)
			b.Run(lvl.String()+"/"+typ.String()+"/x2", func(b *testing.B) {
				b.SetBytes(int64(8 * k.WeightRowBytes()))
				for b.Loop() {
					k.Dot4RowsTiles8(w, u, tiles, 2, out2)
				}
			})
		}
	}
}

// TestTiles8MatchGeneric: Dot4RowsTiles8 over one to three tiles (the Q8_0
// two-row sixteen-token kernel for pairs, the four-row one for the odd
// tile) gives every (row, token) the one-token generic bits; so does
// Dot8RowsTiles8 (two quads at once, an odd last tile as a pair with
// itself) where the level has it, for both quads.
func TestTiles8MatchGeneric(t *testing.T) {
	gen := genericKernels()
	for _, lvl := range Levels() {
		for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
			one := map[gguf.GGMLType]func(w, x []byte) float32{
				gguf.TypeQ4_0: gen.dotQ4_0Q8_0, gguf.TypeQ8_0: gen.dotQ8_0Q8_0, gguf.TypeQ4_K: gen.dotQ4_KQ8_K,
				gguf.TypeQ6_K: gen.dotQ6_KQ8_K,
			}[typ]
			for _, n := range twinSizes(typ)[1:] {
				for kind := edgeRandom; kind <= edgeMixed; kind++ {
					func() {
						defer ForceLevel(lvl)()
						k, err := NewKernel(typ, n)
						if err != nil {
							t.Fatal(err)
						}
						if !k.HasTile8() {
							if tileLevel(lvl) {
								t.Fatalf("%s %s: no tile kernel", lvl, typ)
							}
							return // arm64 levels take the four-token path
						}
						r := rand.New(rand.NewPCG(uint64(n)+23, uint64(kind)))
						var w4 []byte
						for i := 0; i < 4; i++ {
							wi, _ := twinRows(t, r, typ, n, kind)
							w4 = append(w4, wi...)
						}
						u := make([]byte, k.Prep4Bytes())
						k.Prep4(w4, u)
						for tiles := 1; tiles <= 3; tiles++ {
							xs := make([]byte, 0, 8*tiles*k.ActRowBytes())
							for i := 0; i < 8*tiles; i++ {
								_, x := twinRows(t, r, typ, n, kind)
								xs = append(xs, x...)
							}
							tb := k.Tile8Bytes()
							buf := make([]byte, tiles*tb)
							for g := 0; g < tiles; g++ {
								k.PackTile8(xs[8*g*k.ActRowBytes():], buf[g*tb:(g+1)*tb])
							}
							out := make([]float32, 32*tiles)
							k.Dot4RowsTiles8(w4, u, buf, tiles, out)
							check := func(form string, w4 []byte, out []float32) {
								for g := 0; g < tiles; g++ {
									for i := 0; i < 4; i++ {
										for tok := 0; tok < 8; tok++ {
											x := xs[(8*g+tok)*k.ActRowBytes() : (8*g+tok+1)*k.ActRowBytes()]
											want := one(w4[i*k.WeightRowBytes():(i+1)*k.WeightRowBytes()], x)
											if got := out[32*g+8*i+tok]; !sameBits(got, want) {
												t.Fatalf("%s %s %s n=%d kind %d tiles %d: tile %d row %d token %d = %g, generic %g", form, lvl, typ, n, kind, tiles, g, i, tok, got, want)
											}
										}
									}
								}
							}
							check("quad", w4, out)
							if k.HasOct() {
								// A second quad: the first's rows in reverse.
								var w4b []byte
								for i := 3; i >= 0; i-- {
									w4b = append(w4b, w4[i*k.WeightRowBytes():(i+1)*k.WeightRowBytes()]...)
								}
								ub := make([]byte, k.Prep4Bytes())
								k.Prep4(w4b, ub)
								o0, o1 := make([]float32, 32*(tiles+tiles%2)), make([]float32, 32*(tiles+tiles%2))
								k.Dot8RowsTiles8(u, ub, buf, tiles, o0, o1)
								check("oct0", w4, o0)
								check("oct1", w4b, o1)
							}
						}
					}()
				}
			}
		}
	}
}

// BenchmarkTile8Quad: four rows against two tiles (n = 2048, the 1B
// model's width; the tiles then sit in L2, not L1, as in a prompt step)
// as the quad kernel's one pass ("quad") and as two pair calls ("pairs"),
// alternating (abRounds), for each type with both at this level: run with
// -benchtime 1x.
//
// Where the level has the eight-row form (oct), also two quad calls
// ("2quad") against one oct call ("oct") for eight rows.
func BenchmarkTile8Quad(b *testing.B) {
	const n = 2048
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		b.Run(typ.String(), func(b *testing.B) {
			k, err := NewKernel(typ, n)
			if err != nil {
				b.Fatal(err)
			}
			if k.t8.quad == nil || k.t8.pair == nil {
				b.Skip("no quad and pair kernels at this level")
			}
			r := rand.New(rand.NewPCG(5, 6))
			var w []byte
			for i := 0; i < 4; i++ {
				w = append(w, quantizeWeights(b, typ, gaussian(r, n, 0.02))...)
			}
			var xs []byte
			for i := 0; i < 16; i++ {
				xs = append(xs, quantizeRow(b, VecDotType(typ), gaussian(r, n, 1))...)
			}
			tb := k.Tile8Bytes()
			tiles := make([]byte, 2*tb)
			k.PackTile8(xs, tiles[:tb])
			k.PackTile8(xs[8*k.ActRowBytes():], tiles[tb:])
			u := make([]byte, k.Prep4Bytes())
			k.Prep4(w, u)
			if k.t8.scan && u[0] != 0 {
				b.Fatal("quantized rows hold a −128 quant")
			}
			out, out2 := make([]float32, 64), make([]float32, 64)
			ta, tbb := tiles[:tb], tiles[tb:]
			vs := []abVariant{
				{"quad", func() { k.t8.quad(w, k.wrb, u, ta, tbb, out) }},
				{"pairs", func() {
					k.t8.pair(w, k.wrb, u, 0, ta, tbb, out)
					k.t8.pair(w, k.wrb, u, 2, ta, tbb, out[16:])
				}},
			}
			if k.HasOct() {
				// Eight rows: two quad calls against one oct call.
				vs = append(vs, abVariant{"2quad", func() {
					k.t8.quad(w, k.wrb, u, ta, tbb, out)
					k.t8.quad(w, k.wrb, u, ta, tbb, out2)
				}}, abVariant{"oct", func() { k.t8.oct(u, u, ta, tbb, out, out2) }})
			}
			for b.Loop() {
				abRounds(b, vs)
			}
		})
	}
}
