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
		fillQuants(r, blk, rep%3)
		check("random")
	}
}

// TestToken1Q8_0MatchesGeneric: every level's token table
// (kernelSet.token1Q8_0, PrepareToken1) is the generic one byte for byte:
// on rows of random quants, of the extremes −128 and 127, and with every
// one of the 65536 F16 scales (zeros, subnormals, infinities, NaNs).
func TestToken1Q8_0MatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 4))
	const nb = 1 << 16 / 8 // the 65536 scales over eight rows
	x := make([]byte, nb*bytesQ80)
	want, got := make([]byte, nb*token1Q8_0), make([]byte, nb*token1Q8_0)
	for _, lvl := range Levels() {
		restore := ForceLevel(lvl)
		for rep := 0; rep < 8; rep++ {
			for b := 0; b < nb; b++ {
				blk := x[b*bytesQ80 : (b+1)*bytesQ80]
				put16(blk, uint16(rep*nb+b))
				fillQuants(r, blk[2:], (rep+b)%3)
			}
			for _, n := range []int{1, 2, 7, 64, nb} {
				clear(want)
				clear(got)
				token1Q8_0Generic(x[:n*bytesQ80], want[:n*token1Q8_0])
				cur.token1Q8_0(x[:n*bytesQ80], got[:n*token1Q8_0])
				for b := 0; b < n; b++ {
					w, g := want[b*token1Q8_0:(b+1)*token1Q8_0], got[b*token1Q8_0:(b+1)*token1Q8_0]
					if string(w) != string(g) {
						t.Fatalf("%s: block %d of %d (scale %#04x): table % x, generic % x", lvl, b, n, uint16(rep*nb+b), g, w)
					}
				}
				if string(got[n*token1Q8_0:]) != string(make([]byte, len(got)-n*token1Q8_0)) {
					t.Fatalf("%s: %d blocks: wrote past the table", lvl, n)
				}
			}
		}
		restore()
	}
}

// fillQuants fills q with int8 quants of one of three kinds: 0 random
// bytes, 1 only the extremes −128 and 127, 2 the extremes, −1, 0 and 1.
func fillQuants(r *rand.Rand, q []byte, kind int) {
	for i := range q {
		switch kind {
		case 0:
			q[i] = byte(r.IntN(256))
		case 1:
			q[i] = []byte{0x80, 0x7f}[r.IntN(2)]
		default:
			q[i] = []byte{0x80, 0x7f, 0xff, 0, 1}[r.IntN(5)]
		}
	}
}
