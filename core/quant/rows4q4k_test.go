package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// q4kExtremeBlock fills one Q4_K block wb and one Q8_K block xb of kind k
// (q6kBlockKind's kinds): random bytes; zeros; or the largest values: the
// 12 scale bytes all 0xff (every 6-bit scale and min 63), all 0 or random
// 0x00/0x3f/0xc0/0xff patterns (the two high bits of sc4..7 and m4..7 set
// or not independently of the low ones), nibbles all 15, all 0 or random,
// d and dmin ±65504, against quants of −128, 127 or a mixture.
func q4kExtremeBlock(r *rand.Rand, k q6kBlockKind, wb, xb []byte) {
	if k == q6kMixed {
		k = q6kBlockKind(r.IntN(3))
	}
	for j := range wb {
		wb[j] = byte(r.Uint32())
	}
	put16(wb, F32ToF16(float32(r.NormFloat64()*0.01)))
	put16(wb[2:], F32ToF16(float32(r.NormFloat64()*0.01)))
	randomTokenBlock(r, xb)
	switch k {
	case q6kZero:
		clear(wb)
		if r.IntN(2) == 0 {
			clear(xb[:260])
		}
	case q6kMax:
		switch mode := r.IntN(3); mode {
		case 0, 1:
			for j := 4; j < 16; j++ {
				wb[j] = []byte{0xff, 0x00}[mode]
			}
		default:
			for j := 4; j < 16; j++ {
				wb[j] = []byte{0x00, 0x3f, 0xc0, 0xff}[r.IntN(4)]
			}
		}
		switch r.IntN(3) {
		case 0:
			clear(wb[16:])
		case 1:
			for j := 16; j < bytesQ4K; j++ {
				wb[j] = 0xff
			}
		}
		put16(wb, 0x7bff^uint16(r.IntN(2))<<15)     // ±65504
		put16(wb[2:], 0x7bff^uint16(r.IntN(2))<<15) // ±65504
		extremeTokenBlock(r, xb)
	}
	fixBsums(xb)
}

// TestFourRowQ4_KExtremes: the four-row Q4_K decode kernel (dotR4Q4_KQ8_K:
// q4_Kq8_Kr4AVX2, q4_Kq8_Kr4AVX512) at every level this machine and build
// offer gives each row the generic one-row twin's bits, on random blocks,
// zero blocks, blocks of the largest scales, mins and d, dmin against
// extreme quants (−128 included), and mixtures, over odd and even block
// counts, rows adjacent and not.
func TestFourRowQ4_KExtremes(t *testing.T) {
	testFourRowExtremes(t, bytesQ4K, 137, 901, q4kExtremeBlock,
		func(ks *kernelSet) func(w []byte, stride int, x []byte, out *[4]float32) { return ks.dotR4Q4_KQ8_K },
		genericKernels().dotQ4_KQ8_K)
}

// BenchmarkFourRowQ4_K measures the four-row Q4_K decode kernel
// (Kernel.Dot4Rows: four adjacent rows against one token, in cache) at
// each level for the row lengths of a 1B model's matrices (2048, the FFN's
// 5632) and 8192; MB/s counts the weight bytes.
func BenchmarkFourRowQ4_K(b *testing.B) { benchFourRow(b, gguf.TypeQ4_K, 43, false) }
