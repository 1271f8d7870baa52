package quant

import "math"

// FMA32 is a float32 fused multiply-add, a·b + c rounded once, as the x86
// and CUDA FMA instructions compute it. The product of two float32 is exact
// in float64, so only the sum needs care: rounding it to float64 and then
// to float32 could round twice. When the float64 sum r sits exactly halfway
// between two float32 values and was itself rounded (the exact sum is r+e,
// e ≠ 0), r is nudged one float64 ulp towards e so the second rounding goes
// the way the exact value does.
func FMA32(a, b, c float32) float32 {
	r := math.FMA(float64(a), float64(b), float64(c))
	if !isFloat32Midpoint(r) {
		return float32(r) // the usual case: one rounding decides
	}
	// r sits halfway between two float32s: find the sign of the part of
	// p + c that rounding to float64 dropped (TwoSum; p = a·b is exact).
	p := float64(a) * float64(b)
	z := r - p
	e := (p - (r - z)) + (float64(c) - z)
	switch {
	case e > 0:
		r = math.Nextafter(r, math.Inf(1))
	case e < 0:
		r = math.Nextafter(r, math.Inf(-1))
	}
	return float32(r)
}

// isFloat32Midpoint reports whether the float64 r lies exactly halfway
// between two adjacent float32 values (normal range: its low 29 mantissa
// bits are 1 followed by zeros).
func isFloat32Midpoint(r float64) bool {
	const low = 1<<29 - 1
	bits := math.Float64bits(r)
	exp := int(bits>>52) & 0x7ff
	if exp == 0 || exp == 0x7ff || exp-1023 < -126 {
		// Zero, subnormal, Inf/NaN, or below float32's normal range: the
		// midpoint spacing differs there; the activations never get there.
		return false
	}
	return bits&low == 1<<28
}
