//go:build !noasm

package quant

import "golang.org/x/sys/cpu"

// The arm64 levels: NEON (every arm64 CPU has Advanced SIMD) and NEONDot
// where the CPU has the dot-product extension (its own dots; NEON's
// quantizers). Assembly in kernels_arm64.s,
// generated from _asm/kernels_arm64.s.in by _asm/neonwords.

func init() {
	if !cpu.ARM64.HasASIMD || !cpu.ARM64.HasFP {
		return
	}
	neon := *genericKernels()
	neon.dotQ4_0Q8_0 = blocks(q4_0q8_0NEON, bytesQ4, bytesQ80)
	neon.dotQ8_0Q8_0 = blocks(q8_0q8_0NEON, bytesQ80, bytesQ80)
	neon.dotQ4_KQ8_K = blocks(q4_Kq8_KNEON, bytesQ4K, bytesQ8K)
	neon.dotQ6_KQ8_K = blocks(q6_Kq8_KNEON, bytesQ6K, bytesQ8K)
	neon.dotR4Q4_0Q8_0 = rows4(neon.dotQ4_0Q8_0)
	neon.dotR4Q8_0Q8_0 = rows4(neon.dotQ8_0Q8_0)
	neon.dot4Q4_0Q8_0 = loop4(neon.dotQ4_0Q8_0)
	neon.dot4Q8_0Q8_0 = loop4(neon.dotQ8_0Q8_0)
	neon.dot4Q4_KQ8_K = loop4(neon.dotQ4_KQ8_K)
	neon.dot4Q6_KQ8_K = loop4(neon.dotQ6_KQ8_K)
	// No eight-token tile forms on arm64: the generic set's are the Go
	// twins, far slower than the NEON one-token kernels four tokens at a
	// time, so prompts take the four-token path; the four-row decode
	// forms are the NEON one-row kernels four times.
	neon.noTiles()
	neon.dotR4Q4_KQ8_K = rows4(neon.dotQ4_KQ8_K)
	neon.dotR4Q6_KQ8_K = rows4(neon.dotQ6_KQ8_K)
	neon.quantizeQ8_0 = quantizer(quantQ8_0NEON, qk, bytesQ80)
	neon.quantizeQ8_K = quantizer(quantQ8_KNEON, qkK, bytesQ8K)
	neon.dotF16F32 = dotF16F32NEON
	neon.dotF16F32x4 = dotF16F32x4NEON
	neon.axpyF16 = axpyF16NEON
	neon.f16Lanes64 = f16Lanes64NEON
	neon.dotF16x64 = dotF16x64NEON
	neon.axpyF16F64 = axpyF16F64NEON
	neon.foldLanes64 = foldLanes64NEON
	neon.roundF16 = roundF16NEON
	neon.dotF16x64Rows = loopF16x64Rows(dotF16x64NEON)
	neon.axpyF16Lanes64 = loopAxpyF16Lanes64(axpyF16NEON)
	neon.axpyF16F64Rows = loopAxpyF16F64Rows(axpyF16F64NEON)
	neon.quantizeF16 = quantizeF16NEON
	neon.ropePairs = ropePairsNEON
	neon.ropeHalves = ropeHalvesNEON
	neon.dotF32Bytes = f32BytesDot(f32dotNEON)
	neon.dotF32 = f32Dot(f32dotNEON)
	neon.dotF16 = half16Dot(f16dotNEON, F16ToF32)
	neon.dotBF16 = half16Dot(bf16dotNEON, BF16ToF32)
	neon.dotQ4_1Q8_1 = blocks(q4_1q8_1NEON, bytesQ41, bytesQ81)
	neon.dotQ5_0Q8_0 = blocks(q5_0q8_0NEON, bytesQ50, bytesQ80)
	neon.dotQ5_1Q8_1 = blocks(q5_1q8_1NEON, bytesQ51, bytesQ81)
	neon.dot4Q4_1Q8_1 = loop4(neon.dotQ4_1Q8_1)
	neon.dot4Q5_0Q8_0 = loop4(neon.dotQ5_0Q8_0)
	neon.dot4Q5_1Q8_1 = loop4(neon.dotQ5_1Q8_1)
	neon.dotQ2_KQ8_K = blocks(q2_Kq8_KNEON, bytesQ2K, bytesQ8K)
	neon.dotQ3_KQ8_K = blocks(q3_Kq8_KNEON, bytesQ3K, bytesQ8K)
	neon.dotQ5_KQ8_K = blocks(q5_Kq8_KNEON, bytesQ5K, bytesQ8K)
	neon.dot4Q2_KQ8_K = loop4(neon.dotQ2_KQ8_K)
	neon.dot4Q3_KQ8_K = loop4(neon.dotQ3_KQ8_K)
	neon.dot4Q5_KQ8_K = loop4(neon.dotQ5_KQ8_K)
	register(NEON, &neon)
	if !cpu.ARM64.HasASIMDDP {
		return
	}
	dot := neon
	dot.dotQ4_0Q8_0 = blocks(q4_0q8_0NEONDot, bytesQ4, bytesQ80)
	dot.dotQ8_0Q8_0 = blocks(q8_0q8_0NEONDot, bytesQ80, bytesQ80)
	dot.dotQ4_KQ8_K = blocks(q4_Kq8_KNEONDot, bytesQ4K, bytesQ8K)
	dot.dotQ6_KQ8_K = blocks(q6_Kq8_KNEONDot, bytesQ6K, bytesQ8K)
	dot.dotR4Q4_0Q8_0 = rows4(dot.dotQ4_0Q8_0)
	dot.dotR4Q8_0Q8_0 = rows4(dot.dotQ8_0Q8_0)
	dot.dot4Q4_0Q8_0 = loop4(dot.dotQ4_0Q8_0)
	dot.dot4Q8_0Q8_0 = loop4(dot.dotQ8_0Q8_0)
	dot.dot4Q4_KQ8_K = loop4(dot.dotQ4_KQ8_K)
	dot.dot4Q6_KQ8_K = loop4(dot.dotQ6_KQ8_K)
	dot.dotR4Q4_KQ8_K = rows4(dot.dotQ4_KQ8_K)
	dot.dotR4Q6_KQ8_K = rows4(dot.dotQ6_KQ8_K)
	dot.dotQ4_1Q8_1 = blocks(q4_1q8_1NEONDot, bytesQ41, bytesQ81)
	dot.dotQ5_0Q8_0 = blocks(q5_0q8_0NEONDot, bytesQ50, bytesQ80)
	dot.dotQ5_1Q8_1 = blocks(q5_1q8_1NEONDot, bytesQ51, bytesQ81)
	dot.dot4Q4_1Q8_1 = loop4(dot.dotQ4_1Q8_1)
	dot.dot4Q5_0Q8_0 = loop4(dot.dotQ5_0Q8_0)
	dot.dot4Q5_1Q8_1 = loop4(dot.dotQ5_1Q8_1)
	dot.dotQ2_KQ8_K = blocks(q2_Kq8_KNEONDot, bytesQ2K, bytesQ8K)
	dot.dotQ3_KQ8_K = blocks(q3_Kq8_KNEONDot, bytesQ3K, bytesQ8K)
	dot.dotQ5_KQ8_K = blocks(q5_Kq8_KNEONDot, bytesQ5K, bytesQ8K)
	dot.dot4Q2_KQ8_K = loop4(dot.dotQ2_KQ8_K)
	dot.dot4Q3_KQ8_K = loop4(dot.dotQ3_KQ8_K)
	dot.dot4Q5_KQ8_K = loop4(dot.dotQ5_KQ8_K)
	register(NEONDot, &dot)
}

//go:noescape
func q4_0q8_0NEON(w, x *byte, nb int) float32

//go:noescape
func q8_0q8_0NEON(w, x *byte, nb int) float32

//go:noescape
func q4_Kq8_KNEON(w, x *byte, nb int) float32

//go:noescape
func q6_Kq8_KNEON(w, x *byte, nb int) float32

//go:noescape
func q4_0q8_0NEONDot(w, x *byte, nb int) float32

//go:noescape
func q8_0q8_0NEONDot(w, x *byte, nb int) float32

//go:noescape
func q4_Kq8_KNEONDot(w, x *byte, nb int) float32

//go:noescape
func q6_Kq8_KNEONDot(w, x *byte, nb int) float32

//go:noescape
func quantQ8_0NEON(src *float32, dst *byte, nb int)

//go:noescape
func quantQ8_KNEON(src *float32, dst *byte, nb int)

//go:noescape
func f16f32dotNEON(w *byte, x *float32, n16 int) float32

func dotF16F32NEON(w []byte, x []float32) float32 {
	n16 := len(x) / F16F32Lanes
	if n16 == 0 {
		return 0
	}
	_ = w[2*F16F32Lanes*n16-1]
	return f16f32dotNEON(&w[0], &x[0], n16)
}

// The float kernels: assembly for the full groups, the rest through the
// generic bodies (each element or lane on its own there).

//go:noescape
func f16f32dotx4NEON(w *byte, x *float32, stride, n16 int, out *[4]float32)

//go:noescape
func axpyf16NEON(acc *float32, a float32, v *uint16, n8 int)

//go:noescape
func f16lanes64NEON(q *float32, k *uint16, n64 int, out *[16]float32)

//go:noescape
func f16dot64NEON(q *float32, k *uint16, n64 int) float32

//go:noescape
func axpyf16f64NEON(acc *float64, a float32, v *uint16, n8 int)

//go:noescape
func foldlanes64NEON(out, lanes *float32, tail *float64, d, n4 int)

//go:noescape
func roundf16NEON(dst, src *float32, s float32, scaled bool, n8 int)

//go:noescape
func cvtf16NEON(dst *byte, src *float32, n8 int)

//go:noescape
func ropepairsNEON(out, x, cs *float32, n8 int)

//go:noescape
func ropehalvesNEON(out, x, cs *float32, h, n4 int)

func dotF16F32x4NEON(w []byte, x []float32, stride int, out *[4]float32) {
	n16 := len(w) / (2 * F16F32Lanes)
	if n16 == 0 {
		*out = [4]float32{}
		return
	}
	_ = x[3*stride+F16F32Lanes*n16-1]
	f16f32dotx4NEON(&w[0], &x[0], stride, n16, out)
}

func axpyF16NEON(acc []float32, a float32, v []uint16) {
	n8 := len(acc) &^ 7
	v = v[:len(acc)]
	if n8 > 0 {
		axpyf16NEON(&acc[0], a, &v[0], n8/8)
	}
	axpyF16Generic(acc[n8:], a, v[n8:])
}

func f16Lanes64NEON(q []float32, k []uint16, out *[16]float32) {
	if len(k) < 64 {
		*out = [16]float32{}
		return
	}
	_ = q[len(k)-1]
	f16lanes64NEON(&q[0], &k[0], len(k)/64, out)
}

func dotF16x64NEON(q []float32, k []uint16) float32 {
	if len(k) < 64 {
		return 0
	}
	_ = q[len(k)-1]
	return f16dot64NEON(&q[0], &k[0], len(k)/64)
}

func axpyF16F64NEON(acc []float64, a float32, v []uint16) {
	n8 := len(acc) &^ 7
	v = v[:len(acc)]
	if n8 > 0 {
		axpyf16f64NEON(&acc[0], a, &v[0], n8/8)
	}
	axpyF16F64Generic(acc[n8:], a, v[n8:])
}

func foldLanes64NEON(out, lanes []float32, tail []float64) {
	d := len(out)
	n4 := d / 4
	if n4 > 0 {
		foldlanes64NEON(&out[0], &lanes[0], &tail[0], d, n4)
	}
	for j := 4 * n4; j < d; j++ {
		var v [16]float32
		for l := range v {
			v[l] = (lanes[l*d+j] + lanes[(32+l)*d+j]) + (lanes[(16+l)*d+j] + lanes[(48+l)*d+j])
		}
		out[j] = float32(float64(ReduceAdd16(&v)) + tail[j])
	}
}

func roundF16NEON(dst, src []float32, s float32, scaled bool) {
	dst = dst[:len(src)]
	n8 := len(src) &^ 7
	if n8 > 0 {
		roundf16NEON(&dst[0], &src[0], s, scaled, n8/8)
	}
	roundF16Generic(dst[n8:], src[n8:], s, scaled)
}

func quantizeF16NEON(src []float32, dst []byte) {
	dst = dst[:2*len(src)]
	n8 := len(src) &^ 7
	if n8 > 0 {
		cvtf16NEON(&dst[0], &src[0], n8/8)
	}
	quantizeF16Generic(src[n8:], dst[2*n8:])
}

func ropePairsNEON(out, x, cs []float32) {
	n8 := len(cs) / 8
	if n8 > 0 {
		ropepairsNEON(&out[0], &x[0], &cs[0], n8)
	}
	k := 8 * n8
	ropePairsGeneric(out[k:], x[k:], cs[k:])
}

func ropeHalvesNEON(out, x, cs []float32) {
	h := len(cs) / 2
	n4 := h / 4
	if n4 > 0 {
		ropehalvesNEON(&out[0], &x[0], &cs[0], h, n4)
	}
	for i := 4 * n4; i < h; i++ {
		c, s := cs[2*i], cs[2*i+1]
		x0, x1 := x[i], x[i+h]
		out[i] = FMA32(x0, c, -(x1 * s))
		out[i+h] = FMA32(x0, s, x1*c)
	}
}

//go:noescape
func q4_1q8_1NEON(w, x *byte, nb int) float32

//go:noescape
func q5_0q8_0NEON(w, x *byte, nb int) float32

//go:noescape
func q5_1q8_1NEON(w, x *byte, nb int) float32

//go:noescape
func q4_1q8_1NEONDot(w, x *byte, nb int) float32

//go:noescape
func q5_0q8_0NEONDot(w, x *byte, nb int) float32

//go:noescape
func q5_1q8_1NEONDot(w, x *byte, nb int) float32

//go:noescape
func f32dotNEON(a, b *byte, n32 int) float32

//go:noescape
func f16dotNEON(a, b *byte, n32 int) float32

//go:noescape
func bf16dotNEON(a, b *byte, n32 int) float32

//go:noescape
func q2_Kq8_KNEON(w, x *byte, nb int) float32

//go:noescape
func q2_Kq8_KNEONDot(w, x *byte, nb int) float32

//go:noescape
func q3_Kq8_KNEON(w, x *byte, nb int) float32

//go:noescape
func q3_Kq8_KNEONDot(w, x *byte, nb int) float32

//go:noescape
func q5_Kq8_KNEON(w, x *byte, nb int) float32

//go:noescape
func q5_Kq8_KNEONDot(w, x *byte, nb int) float32
