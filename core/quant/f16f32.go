package quant

// F16F32Lanes is the lane count of DotF16F32, and the row length it needs
// to be a multiple of.
const F16F32Lanes = 16

// DotF16F32 is an F16 weight row times F32 activations as llama.cpp's
// tinyBLAS computes it in the AVX-512 build the references came from
// (tinyBLAS<16, __m512, __m512, ggml_fp16_t, float>): the weights widened,
// the activations NOT rounded to F16, sixteen float32 lanes of fused
// multiply-adds, then _mm512_reduce_add_ps. The architecture references
// (token-at-a-time llama.cpp runs) match this to 1e-13; rounding the
// activations to F16 first, as ggml_vec_dot_f16 does, leaves them at 1e-6.
// len(x) must be a multiple of F16F32Lanes and len(w) ≥ 2·len(x).
func DotF16F32(w []byte, x []float32) float32 {
	n := len(x) &^ (F16F32Lanes - 1)
	return cur.dotF16F32(w[:2*n:2*n], x[:n:n])
}

// DotF16F32x4 is DotF16F32 of one weight row against four activation rows
// at x[0:n], x[stride:stride+n], x[2·stride:], x[3·stride:] (n = len(w)/2,
// a multiple of F16F32Lanes); out[k] is bit-identical to DotF16F32 of row k.
func DotF16F32x4(w []byte, x []float32, stride int, out *[4]float32) {
	n := len(w) / 2 &^ (F16F32Lanes - 1)
	cur.dotF16F32x4(w[:2*n:2*n], x[:3*stride+n:3*stride+n], stride, out)
}

func dotF16F32x4Generic(w []byte, x []float32, stride int, out *[4]float32) {
	n := len(w) / 2
	for k := range out {
		out[k] = dotF16F32Generic(w, x[k*stride:k*stride+n])
	}
}

func dotF16F32Generic(w []byte, x []float32) float32 {
	n := len(x)
	w = w[:2*n]
	var acc [F16F32Lanes]float32
	for i := 0; i+F16F32Lanes <= n; i += F16F32Lanes {
		ww := w[2*i : 2*i+2*F16F32Lanes : 2*i+2*F16F32Lanes]
		xx := x[i : i+F16F32Lanes : i+F16F32Lanes]
		for k := range acc {
			acc[k] = FMA32(f16le(ww[2*k:]), xx[k], acc[k])
		}
	}
	return ReduceAdd16(&acc)
}

// ReduceAdd16 is _mm512_reduce_add_ps as GCC and Clang expand it: the upper
// 256 bits added to the lower, then the upper 128 to the lower, then lanes
// (0+2) and (1+3), then those two.
func ReduceAdd16(v *[16]float32) float32 {
	var t3 [8]float32
	for l := range t3 {
		t3[l] = v[8+l] + v[l]
	}
	var t6 [4]float32
	for l := range t6 {
		t6[l] = t3[4+l] + t3[l]
	}
	return (t6[0] + t6[2]) + (t6[1] + t6[3])
}
