// Package quant implements ggml's tensor block formats in pure Go:
// dequantization, the activation quantizers the CPU matmul pairs with each
// weight type, block dot products that follow ggml's integer arithmetic, and
// reference-style weight quantizers for generating test models.
//
// Layouts and arithmetic follow ggml (ggml-common.h block_* structs,
// ggml-quants.c, ggml-cpu quants and vec code) as built for x86 with AVX2 and
// F16C, which is what the reference outputs in the shared test data were
// computed with. Every exported function works on caller-owned slices and
// allocates nothing.
//
// Kernels are small functions with a generic body (kernels_generic.go); the
// indirection in kernels.go is where faster per-architecture twins plug in
// behind the same signatures.
package quant

import (
	"errors"
	"fmt"

	"github.com/minfer/minfer/gguf"
)

// ErrUnsupported is wrapped by every error about a type this package cannot
// handle for the requested operation.
var ErrUnsupported = errors.New("unsupported type")

// ErrUnknownLevel is wrapped by ParseLevel's error for a name that is no
// kernel level.
var ErrUnknownLevel = errors.New("unknown kernel level")

// Byte layouts of the blocks (ggml-common.h). Offsets are noted where each
// kernel reads them.
const (
	qk       = 32        // elements per block of the 32-wide formats
	qkK      = gguf.QK_K // elements per K-quant super-block
	bytesQ4  = 18        // Q4_0: d f16, qs[16]
	bytesQ41 = 20        // Q4_1: d, m f16, qs[16]
	bytesQ50 = 22        // Q5_0: d f16, qh u32, qs[16]
	bytesQ51 = 24        // Q5_1: d, m f16, qh u32, qs[16]
	bytesQ80 = 34        // Q8_0: d f16, qs[32] int8
	bytesQ81 = 36        // Q8_1: d, s f16, qs[32] int8
	bytesQ2K = 84        // Q2_K: scales[16], qs[64], d, dmin f16
	bytesQ3K = 110       // Q3_K: hmask[32], qs[64], scales[12], d f16
	bytesQ4K = 144       // Q4_K: d, dmin f16, scales[12], qs[128]
	bytesQ5K = 176       // Q5_K: d, dmin f16, scales[12], qh[32], qs[128]
	bytesQ6K = 210       // Q6_K: ql[128], qh[64], scales[16] int8, d f16
	bytesQ8K = 292       // Q8_K: d f32, qs[256] int8, bsums[16] int16
)

// VecDotType is the activation format ggml's CPU backend quantizes the
// input row to before taking dot products with weights of type t
// (type_traits_cpu[t].vec_dot_type). It is meaningful only where
// Supported(t); for any other type it returns t.
func VecDotType(t gguf.GGMLType) gguf.GGMLType {
	switch t {
	case gguf.TypeQ4_0, gguf.TypeQ5_0, gguf.TypeQ8_0:
		return gguf.TypeQ8_0
	case gguf.TypeQ4_1, gguf.TypeQ5_1:
		return gguf.TypeQ8_1
	case gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K:
		return gguf.TypeQ8_K
	}
	return t
}

// Supported reports whether VecDot handles weights of type t.
func Supported(t gguf.GGMLType) bool {
	switch t {
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16,
		gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1, gguf.TypeQ8_0,
		gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K:
		return true
	}
	return false
}

// rowBytes is the byte size of n elements of t, or an error naming the
// numbers when n does not fill whole blocks.
func rowBytes(t gguf.GGMLType, n int) (int, error) {
	bs, ts := t.BlockSize(), t.TypeSize()
	if bs == 0 {
		return 0, fmt.Errorf("quant: type %s: %w", t, ErrUnsupported)
	}
	if n < 0 {
		return 0, fmt.Errorf("quant: negative row length %d", n)
	}
	if n%bs != 0 {
		return 0, fmt.Errorf("quant: row of %d elements is not a multiple of %s's %d", n, t, bs)
	}
	return n / bs * ts, nil
}

// checkRow verifies that a buffer of have bytes holds exactly n elements of t.
func checkRow(op string, t gguf.GGMLType, n, have int) error {
	want, err := rowBytes(t, n)
	if err != nil {
		return err
	}
	if have != want {
		return fmt.Errorf("quant: %s: %d elements of %s take %d bytes, got %d", op, n, t, want, have)
	}
	return nil
}

// Dequantize expands one row of type t held in src into dst; len(dst) is the
// element count and src must be exactly that many elements' bytes.
// Supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K, Q3_K,
// Q4_K, Q5_K, Q6_K, Q8_K.
func Dequantize(t gguf.GGMLType, src []byte, dst []float32) error {
	switch t {
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16,
		gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1, gguf.TypeQ8_0, gguf.TypeQ8_1,
		gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ8_K:
	default:
		return fmt.Errorf("quant: dequantize %s: %w", t, ErrUnsupported)
	}
	if err := checkRow("dequantize", t, len(dst), len(src)); err != nil {
		return err
	}
	switch t {
	case gguf.TypeF32:
		dequantF32(src, dst)
	case gguf.TypeF16:
		dequantF16(src, dst)
	case gguf.TypeBF16:
		dequantBF16(src, dst)
	case gguf.TypeQ4_0:
		dequantQ4_0(src, dst)
	case gguf.TypeQ4_1:
		dequantQ4_1(src, dst)
	case gguf.TypeQ5_0:
		dequantQ5_0(src, dst)
	case gguf.TypeQ5_1:
		dequantQ5_1(src, dst)
	case gguf.TypeQ8_0:
		dequantQ8_0(src, dst)
	case gguf.TypeQ8_1:
		dequantQ8_1(src, dst)
	case gguf.TypeQ2_K:
		dequantQ2_K(src, dst)
	case gguf.TypeQ3_K:
		dequantQ3_K(src, dst)
	case gguf.TypeQ4_K:
		dequantQ4_K(src, dst)
	case gguf.TypeQ5_K:
		dequantQ5_K(src, dst)
	case gguf.TypeQ6_K:
		dequantQ6_K(src, dst)
	case gguf.TypeQ8_K:
		dequantQ8_K(src, dst)
	}
	return nil
}

// QuantizeRow converts one activation row to vt, one of the VecDotType
// formats: F32 (copied), F16, BF16, Q8_0, Q8_1, Q8_K. dst must be exactly
// len(src) elements' bytes. The rounding is that of the functions llama.cpp's
// x86 (AVX2, F16C) CPU build calls, so the quantized activations match it bit
// for bit:
//
//   - F16: round to nearest even (F16C _mm256_cvtps_ph(x, 0)).
//   - BF16: ggml's scalar conversion (nearest even, NaN quieted); the AVX2
//     build has no BF16 instructions, so that is what runs.
//   - Q8_0 and Q8_1: ggml-cpu's AVX2 quantize_row_q8_0/q8_1, not the _ref
//     functions. They store d = amax/127, but scale by id = 127/amax (not
//     1/d) and round x·id with _mm256_round_ps(_MM_ROUND_NEAREST), i.e. ties
//     to even (the _ref uses roundf, ties away from zero). The 4-row
//     interleaved quantizer used with repacked Q4_0 weights
//     (quantize_q8_0_4x8) rounds the same way. Q8_1 also stores
//     s = fp16(d · Σq) with the sum taken over the rounded int8 values.
//   - Q8_K: quantize_row_q8_K_ref, which is all x86 has: iscale = −127/max
//     where max is the signed element of largest magnitude (first one wins),
//     q = min(127, nearest_int(iscale·x)) with nearest_int's ties-to-even
//     magic-number rounding, d = 1/iscale stored as float32 (so d is negative
//     when max is positive), bsums = sums of 16 consecutive q. An all-zero
//     block stores d = 0 and zero quants and sums.
func QuantizeRow(vt gguf.GGMLType, src []float32, dst []byte) error {
	switch vt {
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ8_1, gguf.TypeQ8_K:
	default:
		return fmt.Errorf("quant: quantize activations to %s: %w", vt, ErrUnsupported)
	}
	if err := checkRow("quantize row", vt, len(src), len(dst)); err != nil {
		return err
	}
	switch vt {
	case gguf.TypeF32:
		quantizeF32(src, dst)
	case gguf.TypeF16:
		quantizeF16(src, dst)
	case gguf.TypeBF16:
		quantizeBF16(src, dst)
	case gguf.TypeQ8_0:
		quantizeRowQ8_0(src, dst)
	case gguf.TypeQ8_1:
		quantizeRowQ8_1(src, dst)
	case gguf.TypeQ8_K:
		quantizeRowQ8_K(src, dst)
	}
	return nil
}

// CheckVecDot reports, as an error naming the numbers, whether VecDot(t, n,
// w, x) would be a valid call for buffers of wLen and xLen bytes. Callers
// check once per matrix, then call VecDot per row.
func CheckVecDot(t gguf.GGMLType, n, wLen, xLen int) error {
	if !Supported(t) {
		return fmt.Errorf("quant: dot product with %s weights: %w", t, ErrUnsupported)
	}
	if err := checkRow("weight row", t, n, wLen); err != nil {
		return err
	}
	return checkRow("activation row", VecDotType(t), n, xLen)
}

// VecDot is the dot product of one weight row w of n elements of type t with
// one activation row x already quantized to VecDotType(t), computed the way
// ggml's CPU vec_dot kernels do: exact integer sums per block (sub-block
// scales and, for Q2_K/Q4_K/Q5_K, mins through the Q8_K bsums), scaled by
// d_w·d_x and accumulated in float32. F16 and BF16 follow
// ggml_vec_dot_f16/bf16 on AVX2 bit for bit (32 float32 lanes, ggml's
// reduction, float64 tail; the products are exact so FMA does not matter);
// float32 is ggml's choice and keeps the SIMD twin's lanes natural. The
// quantized kernels differ from ggml's SIMD builds only in the order of the
// float32 additions across blocks.
//
// It allocates nothing and does not return an error, because it runs in the
// innermost loop: a call that CheckVecDot rejects is a programming error and
// panics with CheckVecDot's message.
func VecDot(t gguf.GGMLType, n int, w []byte, x []byte) float32 {
	if !vecDotShapeOK(t, n, len(w), len(x)) {
		panic(CheckVecDot(t, n, len(w), len(x)))
	}
	switch t {
	case gguf.TypeF32:
		return dotF32Bytes(w, x)
	case gguf.TypeF16:
		return dotF16(w, x)
	case gguf.TypeBF16:
		return dotBF16(w, x)
	case gguf.TypeQ4_0:
		return dotQ4_0Q8_0(w, x)
	case gguf.TypeQ4_1:
		return dotQ4_1Q8_1(w, x)
	case gguf.TypeQ5_0:
		return dotQ5_0Q8_0(w, x)
	case gguf.TypeQ5_1:
		return dotQ5_1Q8_1(w, x)
	case gguf.TypeQ8_0:
		return dotQ8_0Q8_0(w, x)
	case gguf.TypeQ2_K:
		return dotQ2_KQ8_K(w, x)
	case gguf.TypeQ3_K:
		return dotQ3_KQ8_K(w, x)
	case gguf.TypeQ4_K:
		return dotQ4_KQ8_K(w, x)
	case gguf.TypeQ5_K:
		return dotQ5_KQ8_K(w, x)
	case gguf.TypeQ6_K:
		return dotQ6_KQ8_K(w, x)
	}
	panic("unreachable")
}

// vecDotShapeOK is CheckVecDot without building an error: a handful of
// integer operations, cheap enough for every call.
func vecDotShapeOK(t gguf.GGMLType, n, wLen, xLen int) bool {
	if !Supported(t) || n < 0 {
		return false
	}
	vt := VecDotType(t)
	bs, vbs := t.BlockSize(), vt.BlockSize()
	if n%bs != 0 || n%vbs != 0 {
		return false
	}
	return wLen == n/bs*t.TypeSize() && xLen == n/vbs*vt.TypeSize()
}

// VecDotF32 is ggml_vec_dot_f32 as built for AVX: 32 float32 partial sums
// (four 8-lane vectors) reduced in ggml's order, then the tail of len%32
// elements added in float32. len(a) must equal len(b); the shorter length is
// used otherwise.
func VecDotF32(a, b []float32) float32 {
	n := min(len(a), len(b))
	return dotF32(a[:n], b[:n])
}
