//go:build !noasm

package quant

// AVX2 twins of the remaining dot products — Q4_1, Q5_0, Q5_1
// (kernels_q5_amd64.s) and Q2_K, Q3_K, Q5_K (kernels_k3_amd64.s), each with
// a four-token form — the lane parts of the F32, F16 and BF16 dots
// (floatdot_amd64.s; the wrappers add the tails in Go exactly as the
// generic bodies do), DotF16F32 and its four-row form, and the float
// kernels of rope.go and f16attn.go (rope_amd64.s, f16attn_amd64.s).

// addBreadthAVX2 puts these kernels into the AVX2 set.
func addBreadthAVX2(ks *kernelSet) {
	ks.dotQ4_1Q8_1 = blocks(q4_1q8_1AVX2, bytesQ41, bytesQ81)
	ks.dotQ5_0Q8_0 = blocks(q5_0q8_0AVX2, bytesQ50, bytesQ80)
	ks.dotQ5_1Q8_1 = blocks(q5_1q8_1AVX2, bytesQ51, bytesQ81)
	ks.dotQ2_KQ8_K = blocks(q2_Kq8_KAVX2, bytesQ2K, bytesQ8K)
	ks.dotQ3_KQ8_K = blocks(q3_Kq8_KAVX2, bytesQ3K, bytesQ8K)
	ks.dotQ5_KQ8_K = blocks(q5_Kq8_KAVX2, bytesQ5K, bytesQ8K)
	ks.dot4Q2_KQ8_K = blocks4(q2_Kq8_Kx4AVX2, bytesQ2K, bytesQ8K)
	ks.dot4Q3_KQ8_K = blocks4(q3_Kq8_Kx4AVX2, bytesQ3K, bytesQ8K)
	ks.dot4Q5_KQ8_K = blocks4(q5_Kq8_Kx4AVX2, bytesQ5K, bytesQ8K)
	ks.dot4Q4_1Q8_1 = blocks4(q4_1q8_1x4AVX2, bytesQ41, bytesQ81)
	ks.dot4Q5_0Q8_0 = blocks4(q5_0q8_0x4AVX2, bytesQ50, bytesQ80)
	ks.dot4Q5_1Q8_1 = blocks4(q5_1q8_1x4AVX2, bytesQ51, bytesQ81)
	ks.dotF32Bytes = f32BytesDot(f32dotAVX2)
	ks.dotF32 = f32Dot(f32dotAVX2)
	ks.readSum, ks.readSumSIMD = readSumLanes(readSumAVX2, 256), true
	ks.dotF16 = half16Dot(f16dotAVX2, F16ToF32)
	ks.dotBF16 = half16Dot(bf16dotAVX2, BF16ToF32)
	ks.ropePairs = ropePairsAVX2Row
	ks.ropeHalves = ropeHalvesAVX2Row
	ks.dotF16F32 = dotF16F32AVX2
	ks.dotF16F32x4 = dotF16F32x4AVX2
	ks.dotF16x64 = dotF16x64AVX2
	ks.axpyF16F64 = axpyF16F64AVX2
	ks.foldLanes64 = foldLanes64AVX2
	ks.roundF16 = roundF16AVX2
	ks.dotF16x64Rows = dotF16x64RowsAVX2
	ks.axpyF16Lanes64 = axpyF16Lanes64AVX2
	ks.axpyF16F64Rows = axpyF16F64RowsAVX2
	ks.quantizeF16 = quantizeF16AVX2
}

//go:noescape
func q4_1q8_1x4AVX2(w, x *byte, stride, nb int, out *[4]float32)

//go:noescape
func q5_0q8_0x4AVX2(w, x *byte, stride, nb int, out *[4]float32)

//go:noescape
func q5_1q8_1x4AVX2(w, x *byte, stride, nb int, out *[4]float32)

//go:noescape
func q2_Kq8_Kx4AVX2(w, x *byte, stride, nb int, out *[4]float32)

//go:noescape
func q3_Kq8_Kx4AVX2(w, x *byte, stride, nb int, out *[4]float32)

//go:noescape
func q5_Kq8_Kx4AVX2(w, x *byte, stride, nb int, out *[4]float32)

//go:noescape
func q4_1q8_1AVX2(w, x *byte, nb int) float32

//go:noescape
func q5_0q8_0AVX2(w, x *byte, nb int) float32

//go:noescape
func q5_1q8_1AVX2(w, x *byte, nb int) float32

//go:noescape
func q2_Kq8_KAVX2(w, x *byte, nb int) float32

//go:noescape
func q3_Kq8_KAVX2(w, x *byte, nb int) float32

//go:noescape
func q5_Kq8_KAVX2(w, x *byte, nb int) float32

//go:noescape
func f32dotAVX2(a, b *byte, n32 int) float32

//go:noescape
func f16dotAVX2(a, b *byte, n32 int) float32

//go:noescape
func bf16dotAVX2(a, b *byte, n32 int) float32

//go:noescape
func f16f32dotAVX2(w *byte, x *float32, n16 int) float32

func dotF16F32AVX2(w []byte, x []float32) float32 {
	n16 := len(x) / F16F32Lanes
	if n16 == 0 {
		return 0
	}
	_ = w[2*F16F32Lanes*n16-1]
	return f16f32dotAVX2(&w[0], &x[0], n16)
}

//go:noescape
func f16f32dotx4AVX2(w *byte, x *float32, stride, n16 int, out *[4]float32)

func dotF16F32x4AVX2(w []byte, x []float32, stride int, out *[4]float32) {
	n16 := len(w) / (2 * F16F32Lanes)
	if n16 == 0 {
		*out = [4]float32{}
		return
	}
	_ = x[3*stride+F16F32Lanes*n16-1]
	f16f32dotx4AVX2(&w[0], &x[0], stride, n16, out)
}
