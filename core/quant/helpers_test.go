package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// weightTypes are the types VecDot takes as weights.
var weightTypes = []gguf.GGMLType{
	gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16,
	gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1, gguf.TypeQ8_0,
	gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K,
}

func mustRowBytes(t testing.TB, typ gguf.GGMLType, n int) int {
	t.Helper()
	b, err := typ.RowBytes(int64(n))
	if err != nil {
		t.Fatal(err)
	}
	return int(b)
}

// gaussian fills n values of normal(0, std) with a few outliers, like real
// activations.
func gaussian(r *rand.Rand, n int, std float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * std)
		if r.IntN(64) == 0 {
			x[i] *= 8
		}
	}
	return x
}

// quantizeWeights and quantizeRow are the exported calls with t.Fatal.
func quantizeWeights(t testing.TB, typ gguf.GGMLType, x []float32) []byte {
	t.Helper()
	b := make([]byte, mustRowBytes(t, typ, len(x)))
	if err := QuantizeWeights(typ, x, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func quantizeRow(t testing.TB, typ gguf.GGMLType, x []float32) []byte {
	t.Helper()
	b := make([]byte, mustRowBytes(t, typ, len(x)))
	if err := QuantizeRow(typ, x, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func dequantize(t testing.TB, typ gguf.GGMLType, b []byte, n int) []float32 {
	t.Helper()
	y := make([]float32, n)
	if err := Dequantize(typ, b, y); err != nil {
		t.Fatal(err)
	}
	return y
}

// nmse is Σ(a−ref)² / Σref².
func nmse(a, ref []float32) float64 {
	var num, den float64
	for i := range ref {
		d := float64(a[i]) - float64(ref[i])
		num += d * d
		den += float64(ref[i]) * float64(ref[i])
	}
	return num / den
}

// scaleFields lists, per type, the byte offsets (within a block) of its f16
// scale fields, so random block bytes can be given sane scales.
var scaleFields = map[gguf.GGMLType][]int{
	gguf.TypeQ4_0: {0}, gguf.TypeQ4_1: {0, 2}, gguf.TypeQ5_0: {0}, gguf.TypeQ5_1: {0, 2},
	gguf.TypeQ8_0: {0}, gguf.TypeQ2_K: {80, 82}, gguf.TypeQ3_K: {108},
	gguf.TypeQ4_K: {0, 2}, gguf.TypeQ5_K: {0, 2}, gguf.TypeQ6_K: {208},
}

// randomWeightBytes is a row of n elements of typ with random quants and
// random (finite, modest) scales: every bit pattern of the quant fields is
// valid, so this exercises layouts independently of QuantizeWeights.
func randomWeightBytes(t testing.TB, r *rand.Rand, typ gguf.GGMLType, n int) []byte {
	b := make([]byte, mustRowBytes(t, typ, n))
	switch typ {
	case gguf.TypeF32:
		for i := 0; i < n; i++ {
			putF32(b[4*i:], float32(r.NormFloat64()))
		}
		return b
	case gguf.TypeF16:
		for i := 0; i < n; i++ {
			put16(b[2*i:], F32ToF16(float32(r.NormFloat64())))
		}
		return b
	case gguf.TypeBF16:
		for i := 0; i < n; i++ {
			put16(b[2*i:], F32ToBF16(float32(r.NormFloat64())))
		}
		return b
	}
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	ts := typ.TypeSize()
	for blk := 0; blk < len(b)/ts; blk++ {
		for _, off := range scaleFields[typ] {
			v := float32((0.5 + r.Float64()) * 0.01)
			if r.IntN(2) == 0 {
				v = -v
			}
			put16(b[blk*ts+off:], F32ToF16(v))
		}
	}
	return b
}

// repeatedRows is a weight of rows rows of n elements (wrb bytes each) for
// the from-memory benchmarks: 64 distinct rows of typ (gaussian, std 0.02,
// drawn from r), repeated, so the bytes stream from memory while the
// values stay realistic.
func repeatedRows(t testing.TB, r *rand.Rand, typ gguf.GGMLType, n, wrb, rows int) []byte {
	w := make([]byte, rows*wrb)
	for i := 0; i < 64; i++ {
		copy(w[i*wrb:], quantizeWeights(t, typ, gaussian(r, n, 0.02)))
	}
	for i := 64; i < rows; i++ {
		copy(w[i*wrb:(i+1)*wrb], w[(i%64)*wrb:])
	}
	return w
}
