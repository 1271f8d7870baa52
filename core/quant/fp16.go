package quant

import "math"

// F16ToF32 widens an IEEE binary16 value to float32. Every finite half is
// exactly representable, subnormals included. A NaN keeps its sign and
// payload and comes back quiet, as x86 F16C (VCVTPH2PS) returns it.
func F16ToF32(h uint16) float32 {
	// Normal numbers, by far the common case: rebias the exponent by 127−15.
	if e := h & 0x7c00; e != 0 && e != 0x7c00 {
		return math.Float32frombits(uint32(h&0x8000)<<16 | (uint32(h&0x7fff)+(127-15)<<10)<<13)
	}
	return f16SpecialToF32(h)
}

// f16SpecialToF32 handles zeros, subnormals, infinities and NaNs.
func f16SpecialToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	mant := uint32(h & 0x3ff)
	if h&0x7c00 == 0 {
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// A half subnormal is mant·2⁻²⁴; the product is exact in float32.
		f := float32(mant) * (1.0 / (1 << 24))
		return math.Float32frombits(sign | math.Float32bits(f))
	}
	if mant != 0 {
		return math.Float32frombits(sign | 0x7fc00000 | mant<<13)
	}
	return math.Float32frombits(sign | 0x7f800000)
}

// F32ToF16 narrows f to IEEE binary16, rounding to nearest with ties to even:
// the result of x86 F16C _cvtss_sh(f, 0), which llama.cpp's x86 CPU build
// uses for every f32→f16 conversion. Values at or beyond 65520 become ±Inf,
// values below the smallest subnormal round to ±0 (ties to even), and a NaN
// keeps its sign and top 9 payload bits with the quiet bit set.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00 | uint16(mant>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // biased half exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Half subnormal: mant·2⁻²⁴. With the implicit bit, m·2^(exp−150)
		// equals (m >> (14−e))·2⁻²⁴ plus a remainder to round.
		if e < -10 {
			return sign // below half the smallest subnormal (or an f32 subnormal)
		}
		m := mant | 0x800000
		shift := uint32(14 - e)
		q := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && q&1 == 1) {
			q++ // may carry into the smallest normal, which encodes correctly
		}
		return sign | uint16(q)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry out of the mantissa bumps the exponent; 0x7c00 is Inf
	}
	return sign | uint16(h)
}

// BF16ToF32 widens a bfloat16 value to float32 (exact).
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 narrows f to bfloat16 the way ggml's scalar
// ggml_compute_fp32_to_bf16 does: round to nearest even on the top 16 bits,
// subnormals kept (not flushed), a NaN truncated and forced quiet.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}
