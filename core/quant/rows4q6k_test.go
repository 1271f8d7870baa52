package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// q6kBlockKind selects how q6kExtremeBlock fills a Q6_K block and the
// token's Q8_K block beside it.
type q6kBlockKind int

const (
	q6kRandom q6kBlockKind = iota // random bytes, finite d (random scales)
	q6kZero                       // all weight bytes zero (d = 0); the token random or zero
	q6kMax                        // scales ±127 / −128, d = ±65504, extreme 6-bit values and quants
	q6kMixed                      // each block one of the above at random
	q6kKinds
)

// randomTokenBlock fills the Q8_K block xb with a small random d_x and
// random quants (−128 included: no sign trick in the kernels tested).
func randomTokenBlock(r *rand.Rand, xb []byte) {
	putF32(xb, float32(r.NormFloat64()*0.01))
	for j := 4; j < 260; j++ {
		xb[j] = byte(r.Uint32())
	}
}

// extremeTokenBlock gives the Q8_K block xb a d_x large enough that some
// products overflow to ±Inf (or a small one), and quants all −128, all 127
// or a mixture of −128, 127 and −127.
func extremeTokenBlock(r *rand.Rand, xb []byte) {
	putF32(xb, float32([]float64{1e-3, 1e30, -1e30}[r.IntN(3)]))
	mode := r.IntN(3)
	for j := 4; j < 260; j++ {
		switch mode {
		case 0:
			xb[j] = 0x80 // −128
		case 1:
			xb[j] = 0x7f
		default:
			xb[j] = []byte{0x80, 0x7f, 0x81}[r.IntN(3)]
		}
	}
}

// q6kExtremeBlock fills one Q6_K block wb and one Q8_K block xb of kind k.
func q6kExtremeBlock(r *rand.Rand, k q6kBlockKind, wb, xb []byte) {
	if k == q6kMixed {
		k = q6kBlockKind(r.IntN(3))
	}
	for j := range wb {
		wb[j] = byte(r.Uint32())
	}
	put16(wb[208:], F32ToF16(float32(r.NormFloat64()*0.01)))
	randomTokenBlock(r, xb)
	switch k {
	case q6kZero:
		clear(wb)
		if r.IntN(2) == 0 {
			clear(xb[:260])
		}
	case q6kMax:
		// The 6-bit values all 0 (−32), all 63 (31) or random, per block.
		switch r.IntN(3) {
		case 0:
			clear(wb[:192])
		case 1:
			for j := range wb[:192] {
				wb[j] = 0xff
			}
		}
		for j := 192; j < 208; j++ {
			wb[j] = []byte{0x7f, 0x81, 0x80}[r.IntN(3)] // 127, −127, −128
		}
		put16(wb[208:], 0x7bff^uint16(r.IntN(2))<<15) // ±65504
		extremeTokenBlock(r, xb)
	}
	fixBsums(xb)
}

// TestFourRowQ6_KExtremes: the four-row Q6_K decode kernel
// (dotR4Q6_KQ8_K: q6_Kq8_Kr4AVX2, q6_Kq8_Kr4AVX512) at every level this
// machine and build offer gives each row the generic one-row twin's bits,
// on random blocks, zero blocks, blocks of the largest scales (±127,
// −128) and d (±65504) against extreme quants, and mixtures, over odd and
// even block counts, rows adjacent and not.
func TestFourRowQ6_KExtremes(t *testing.T) {
	// The token's block is rewritten by each row; the last row's stays, as
	// a row's kind may change the token's.
	testFourRowExtremes(t, bytesQ6K, 131, 900, q6kExtremeBlock,
		func(ks *kernelSet) func(w []byte, stride int, x []byte, out *[4]float32) { return ks.dotR4Q6_KQ8_K },
		genericKernels().dotQ6_KQ8_K)
}

// testFourRowExtremes runs a four-row K-quant decode kernel (four) at
// every level against the generic one-row twin (one), bit for bit, on
// blocks of bb bytes that fill makes (one of q6kKinds kinds, the token's
// block beside it), over odd and even block counts, rows adjacent and
// not (seeded by mul and add).
func testFourRowExtremes(t *testing.T, bb int, mul, add uint64, fill func(r *rand.Rand, kind q6kBlockKind, wb, xb []byte),
	four func(ks *kernelSet) func(w []byte, stride int, x []byte, out *[4]float32), one func(w, x []byte) float32) {
	for _, lvl := range Levels() {
		dot := four(levels[lvl])
		for _, nb := range []int{1, 2, 3, 4, 7, 8, 11} {
			for kind := q6kRandom; kind < q6kKinds; kind++ {
				for _, gap := range []int{0, bb*3 + 17} {
					t.Run(fmt.Sprintf("%s/blocks=%d/kind=%d/gap=%d", lvl, nb, kind, gap), func(t *testing.T) {
						r := rand.New(rand.NewPCG(uint64(nb)*mul+uint64(gap), uint64(kind)+add))
						rb := nb * bb
						stride := rb + gap
						for rep := 0; rep < 12; rep++ {
							w := make([]byte, 3*stride+rb)
							x := make([]byte, nb*bytesQ8K)
							for row := 0; row < 4; row++ {
								for b := 0; b < nb; b++ {
									fill(r, kind, w[row*stride+b*bb:row*stride+(b+1)*bb], x[b*bytesQ8K:(b+1)*bytesQ8K])
								}
							}
							var out [4]float32
							dot(w, stride, x, &out)
							for row := 0; row < 4; row++ {
								want := one(w[row*stride:row*stride+rb], x)
								if !sameBits(out[row], want) {
									t.Fatalf("rep %d row %d: %s = %g (%#08x), generic %g (%#08x)",
										rep, row, lvl, out[row], math.Float32bits(out[row]), want, math.Float32bits(want))
								}
							}
						}
					})
				}
			}
		}
	}
}

// BenchmarkFourRowQ6_K measures the four-row Q6_K decode kernel
// (Kernel.Dot4Rows: four adjacent rows against one token, in cache) at
// each level for the row lengths of a 1B model's matrices (2048, the FFN's
// 5632) and 8192; MB/s counts the weight bytes.
func BenchmarkFourRowQ6_K(b *testing.B) { benchFourRow(b, gguf.TypeQ6_K, 41, true) }

// benchFourRow is BenchmarkFourRowQ*_K for weight type typ (seed: the
// random stream; generic: the generic level too).
func benchFourRow(b *testing.B, typ gguf.GGMLType, seed uint64, generic bool) {
	for _, n := range []int{2048, 5632, 8192} {
		r := rand.New(rand.NewPCG(uint64(n), seed))
		var w []byte
		for i := 0; i < 4; i++ {
			w = append(w, quantizeWeights(b, typ, gaussian(r, n, 0.02))...)
		}
		x := quantizeRow(b, gguf.TypeQ8_K, gaussian(r, n, 1))
		for _, lvl := range Levels() {
			if lvl == Generic && !generic {
				continue
			}
			restore := ForceLevel(lvl)
			k, err := NewKernel(typ, n)
			restore()
			if err != nil {
				b.Fatal(err)
			}
			var out [4]float32
			b.Run(fmt.Sprintf("%s/n=%d", lvl, n), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					k.Dot4Rows(w, x, &out)
				}
			})
		}
	}
}
