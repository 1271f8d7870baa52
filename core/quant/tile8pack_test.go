package quant

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TestPackTile8MatchesGo: every level's Q4_0 and Q8_0 tile packer writes
// the Go packer's bytes (packTile8Q8_0, or packTile8Q8_0Abs for tile8Abs
// tiles) for random rows, zero and extreme blocks, quants of −128 and NaN
// and subnormal scales, one to nine blocks, and rows further apart than
// their length.
func TestPackTile8MatchesGo(t *testing.T) {
	for _, lvl := range Levels() {
		for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0} {
			for _, nb := range []int{1, 2, 3, 8, 9} {
				for kind := edgeRandom; kind <= edgeMixed; kind++ {
					func() {
						defer ForceLevel(lvl)()
						k, err := NewKernel(typ, nb*qk)
						if err != nil {
							t.Fatal(err)
						}
						if !k.HasTile8() {
							return
						}
						r := rand.New(rand.NewPCG(uint64(nb)+31, uint64(kind)))
						for _, pad := range []int{0, 7} {
							xrb := k.ActRowBytes() + pad
							x := make([]byte, 8*xrb)
							for i := 0; i < 8; i++ {
								_, xi := twinRows(t, r, typ, nb*qk, kind)
								copy(x[i*xrb:], xi)
							}
							// Edge values the quantizer never writes: a −128
							// quant, a NaN and a subnormal scale.
							x[2+r.IntN(32)] = 0x80
							put16(x[xrb:], 0x7e01)
							put16(x[2*xrb:], 0x0003)
							got := make([]byte, nb*k.t8.tileBlock)
							want := make([]byte, len(got))
							k.t8.pack(x, xrb, nb, got)
							if k.t8.tileBlock == tile8AbsBlock {
								packTile8Q8_0Abs(x, xrb, nb, want)
							} else {
								packTile8Q8_0(x, xrb, nb, want)
							}
							if !bytes.Equal(got, want) {
								for i := range got {
									if got[i] != want[i] {
										t.Fatalf("%s %s nb=%d kind %d pad %d: tile byte %d (block %d, offset %d) = %#x, Go %#x",
											lvl, typ, nb, kind, pad, i, i/k.t8.tileBlock, i%k.t8.tileBlock, got[i], want[i])
									}
								}
							}
						}
					}()
				}
			}
		}
	}
}

// BenchmarkPackTile8: one eight-token tile of n = 2048 packed by the
// level's packer and by the Go one, alternating (abRounds): run with
// -benchtime 1x.
func BenchmarkPackTile8(b *testing.B) {
	const n = 2048
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0} {
		b.Run(typ.String(), func(b *testing.B) {
			k, err := NewKernel(typ, n)
			if err != nil {
				b.Fatal(err)
			}
			if !k.HasTile8() {
				b.Skip("no tiles at this level")
			}
			r := rand.New(rand.NewPCG(7, 8))
			var x []byte
			for i := 0; i < 8; i++ {
				x = append(x, quantizeRow(b, gguf.TypeQ8_0, gaussian(r, n, 1))...)
			}
			xrb, nb := k.ActRowBytes(), n/qk
			tile := make([]byte, k.Tile8Bytes())
			goPack := packTile8Q8_0
			if k.t8.tileBlock == tile8AbsBlock {
				goPack = packTile8Q8_0Abs
			}
			for b.Loop() {
				abRounds(b, []abVariant{
					{"level", func() { k.t8.pack(x, xrb, nb, tile) }},
					{"go", func() { goPack(x, xrb, nb, tile) }},
				})
			}
		})
	}
}
