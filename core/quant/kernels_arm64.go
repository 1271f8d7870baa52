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
	neon.quantizeQ8_0 = quantizeRowQ8_0NEON
	neon.quantizeQ8_K = quantizeRowQ8_KNEON
	neon.dotF16F32 = dotF16F32NEON
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

func quantizeRowQ8_0NEON(src []float32, dst []byte) {
	nb := len(src) / qk
	if nb == 0 {
		return
	}
	_ = dst[nb*bytesQ80-1]
	quantQ8_0NEON(&src[0], &dst[0], nb)
}

func quantizeRowQ8_KNEON(src []float32, dst []byte) {
	nb := len(src) / qkK
	if nb == 0 {
		return
	}
	_ = dst[nb*bytesQ8K-1]
	quantQ8_KNEON(&src[0], &dst[0], nb)
}

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
