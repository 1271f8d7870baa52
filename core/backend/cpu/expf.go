package cpu

import (
	"math"

	"github.com/minfer/minfer/core/quant"
)

// fma32 is a float32 fused multiply-add rounded once, as the hardware
// FMA of ggml's build computes it.
func fma32(a, b, c float32) float32 { return quant.FMA32(a, b, c) }

// expf is the vector exp that ggml's x86 CPU backend uses for softmax and
// SiLU (an Arm optimized-routines polynomial: max error about 1.5 ulp).
// Matching it, rather than a correctly rounded exp, keeps the attention
// weights and activations bit-close to llama.cpp's, which matters because
// they are quantized right after.
func expf(x float32) float32 {
	const (
		shift = 0x1.8p23
		log2e = 0x1.715476p+0
		ln2hi = 0x1.62e4p-1
		ln2lo = 0x1.7f7d1cp-20
		c0    = 0x1.0e4020p-7
		c1    = 0x1.573e2ep-5
		c2    = 0x1.555e66p-3
		c3    = 0x1.fffdb6p-2
		c4    = 0x1.ffffecp-1
	)
	z := fma32(x, log2e, shift)
	n := z - shift
	b := fma32(-n, ln2lo, fma32(-n, ln2hi, x))
	e := math.Float32bits(z) << 23
	k := math.Float32frombits(e + math.Float32bits(1))
	u := b * b
	j := fma32(fma32(fma32(c0, b, c1), u, fma32(c2, b, c3)), u, c4*b)
	an := float32(math.Abs(float64(n)))
	if !(an > 126) {
		return fma32(j, k, k)
	}
	var g uint32
	if n <= 0 {
		g = 0x82000000
	}
	s1 := math.Float32frombits(g + 0x7f000000)
	s2 := math.Float32frombits(e - g)
	if an > 192 {
		return s1 * s1
	}
	return fma32(s2, j, s2) * s1
}
