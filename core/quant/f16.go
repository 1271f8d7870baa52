package quant

// F16 kernels for attention over an F16 KV cache. Their callers pass
// half-valued float32 multipliers (Q and the softmax weights rounded to F16,
// as ggml's F16 mat-mul does), so every product is exact in float32 and
// multiply-then-add is what an FMA gives.

// AxpyF16 does acc[i] += a·v[i] for the halves v (len(v) ≥ len(acc)), one
// float32 rounding per element.
func AxpyF16(acc []float32, a float32, v []uint16) {
	cur.axpyF16(acc, a, v[:len(acc)])
}

func axpyF16Generic(acc []float32, a float32, v []uint16) {
	v = v[:len(acc)]
	for i, h := range v {
		acc[i] += a * F16ToF32(h)
	}
}

// DotF16Lanes64 is the lane part of ggml_vec_dot_f16 as the AVX-512 build
// runs it (GGML_F16_STEP 64: four 16-lane accumulators): over the first
// len(k)/64·64 elements, lane l mod 64 sums q[i]·k[i] in order from zero;
// then the four accumulators are folded (acc0+acc2, acc1+acc3, their sum)
// into out, ready for the final 16-lane reduction. len(q) ≥ that length.
func DotF16Lanes64(q []float32, k []uint16, out *[16]float32) {
	n := len(k) &^ 63
	cur.f16Lanes64(q[:n], k[:n], out)
}

func f16Lanes64Generic(q []float32, k []uint16, out *[16]float32) {
	var lanes [64]float32
	for i := 0; i+64 <= len(k); i += 64 {
		qq := q[i : i+64 : i+64]
		kk := k[i : i+64 : i+64]
		for l := range lanes {
			lanes[l] += qq[l] * F16ToF32(kk[l])
		}
	}
	for l := range out {
		out[l] = (lanes[l] + lanes[32+l]) + (lanes[16+l] + lanes[48+l])
	}
}
