package quant

import (
	"math/rand/v2"
	"testing"
)

// TestQ8_0FactsSum: q8_0Facts's word-wise Σq is the quant-by-quant sum
// (q8_0SumGeneric) on random blocks and on every quant −128, 127, −1, 0
// and mixes of the extremes; its d_x is the block's F16 scale.
func TestQ8_0FactsSum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	blk := make([]byte, bytesQ80)
	check := func(what string) {
		t.Helper()
		d, s8 := q8_0Facts(blk)
		if want := 8 * q8_0SumGeneric(blk); int32(s8) != want {
			t.Fatalf("%s: 8·Σq %d, quant by quant %d (block % x)", what, int32(s8), want, blk)
		}
		if !sameBits(d, f16le(blk)) {
			t.Fatalf("%s: d %g, want %g", what, d, f16le(blk))
		}
	}
	for _, v := range []byte{0x80, 0x7f, 0xff, 0, 1} {
		for i := range blk {
			blk[i] = v
		}
		check("constant")
	}
	for rep := 0; rep < 20000; rep++ {
		for i := range blk {
			switch rep % 3 {
			case 0:
				blk[i] = byte(r.IntN(256))
			case 1:
				blk[i] = []byte{0x80, 0x7f}[r.IntN(2)]
			default:
				blk[i] = []byte{0x80, 0x7f, 0xff, 0, 1}[r.IntN(5)]
			}
		}
		check("random")
	}
}
