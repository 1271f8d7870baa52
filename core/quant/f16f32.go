package quant

import "math"

// F16F32Lanes is the lane count of DotF16F32, and the row length it needs
// to be a multiple of.
const F16F32Lanes = 8

// DotF16F32 is an F16 weight row times F32 activations as llama.cpp's
// tinyBLAS computes it on AVX2 (tinyBLAS<8, __m256, __m256, ggml_fp16_t,
// float>): the weights widened, the activations NOT rounded to F16, eight
// float32 lanes of fused multiply-adds, then the 256→128→32-bit horizontal
// sum. This is what the architecture references (token-at-a-time
// llama.cpp runs) match to 1e-13; rounding the activations to F16 first,
// as ggml_vec_dot_f16 does, leaves them at 1e-6.
// len(x) must be a multiple of F16F32Lanes and len(w) = 2·len(x).
func DotF16F32(w []byte, x []float32) float32 {
	n := len(x)
	w = w[:2*n]
	var acc [F16F32Lanes]float32
	for i := 0; i+F16F32Lanes <= n; i += F16F32Lanes {
		ww := w[2*i : 2*i+2*F16F32Lanes : 2*i+2*F16F32Lanes]
		xx := x[i : i+F16F32Lanes : i+F16F32Lanes]
		for k := range acc {
			acc[k] = float32(math.FMA(float64(f16le(ww[2*k:])), float64(xx[k]), float64(acc[k])))
		}
	}
	v0, v1, v2, v3 := acc[4]+acc[0], acc[5]+acc[1], acc[6]+acc[2], acc[7]+acc[3]
	return (v0 + v2) + (v1 + v3)
}
