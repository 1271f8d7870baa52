package quant

import "math"

// Activation quantizers (QuantizeRow). QuantizeRow's doc comment records
// which llama.cpp function each one reproduces and why.

func quantizeF32(src []float32, dst []byte) {
	dst = dst[:4*len(src)]
	for i, v := range src {
		putF32(dst[4*i:], v)
	}
}

func quantizeF16(src []float32, dst []byte) { cur.quantizeF16(src, dst) }

func quantizeF16Generic(src []float32, dst []byte) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		put16(dst[2*i:], F32ToF16(v))
	}
}

func quantizeBF16(src []float32, dst []byte) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		put16(dst[2*i:], F32ToBF16(v))
	}
}

// cvtRoundEven8 is _mm256_round_ps(v, _MM_ROUND_NEAREST) followed by
// _mm256_cvtps_epi32 and the saturating packs to int8: ties to even, values
// beyond int8 saturate, and NaN or anything outside int32 (the "integer
// indefinite" 0x80000000) becomes −128.
func cvtRoundEven8(v float32) int8 {
	r := math.RoundToEven(float64(v))
	switch {
	case !(r >= -(1<<31) && r < 1<<31):
		return -128
	case r > 127:
		return 127
	case r < -128:
		return -128
	}
	return int8(r)
}

// nearestInt is ggml's nearest_int: adding 1.5·2²³ leaves round(v) with
// ties to even in the low mantissa bits. Exact for |v| < 2²²; callers pass
// values bounded by the block's own maximum.
func nearestInt(v float32) int32 {
	return int32(math.Float32bits(v+12582912)&0x007fffff) - 0x00400000
}

// amaxOf is the largest |x|; NaNs are skipped, as max_ps skips them.
func amaxOf(x []float32) float32 {
	var amax float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax = a
		}
	}
	return amax
}

// quantizeRowQ8_0 is ggml-cpu's AVX2 quantize_row_q8_0: d = amax/127 stored
// as f16, q = round_even(x · (127/amax)).
func quantizeRowQ8_0Generic(src []float32, dst []byte) {
	for i := 0; i < len(src)/qk; i++ {
		x := src[i*qk : i*qk+qk : i*qk+qk]
		b := dst[i*bytesQ80 : i*bytesQ80+bytesQ80 : i*bytesQ80+bytesQ80]
		amax := amaxOf(x)
		put16(b, F32ToF16(amax/127))
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		qs := b[2:34:34]
		for j, v := range x {
			qs[j] = byte(cvtRoundEven8(v * id))
		}
	}
}

// quantizeRowQ8_1 is ggml-cpu's AVX2 quantize_row_q8_1: Q8_0's rounding,
// plus s = fp16(d · Σq) over the rounded quants.
func quantizeRowQ8_1(src []float32, dst []byte) {
	for i := 0; i < len(src)/qk; i++ {
		x := src[i*qk : i*qk+qk : i*qk+qk]
		b := dst[i*bytesQ81 : i*bytesQ81+bytesQ81 : i*bytesQ81+bytesQ81]
		amax := amaxOf(x)
		d := amax / 127
		put16(b, F32ToF16(d))
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		qs := b[4:36:36]
		var sum int32
		for j, v := range x {
			q := cvtRoundEven8(v * id)
			qs[j] = byte(q)
			sum += int32(q)
		}
		put16(b[2:], F32ToF16(d*float32(sum)))
	}
}

// quantizeRowQ8_K is quantize_row_q8_K_ref (the only Q8_K quantizer x86
// has): iscale = −127/max with max the signed element of largest magnitude,
// q = min(127, nearest_int(iscale·x)), d = 1/iscale, bsums per 16.
func quantizeRowQ8_KGeneric(src []float32, dst []byte) {
	for i := 0; i < len(src)/qkK; i++ {
		x := src[i*qkK : i*qkK+qkK : i*qkK+qkK]
		b := dst[i*bytesQ8K : i*bytesQ8K+bytesQ8K : i*bytesQ8K+bytesQ8K]
		extreme, amax := signedMax(x)
		if amax == 0 {
			// ggml leaves bsums untouched here; zero is their true value.
			clear(b)
			continue
		}
		iscale := -127 / extreme
		qs := b[4:260:260]
		for j, v := range x {
			// The explicit conversion keeps the product rounded before the
			// magic add, as ggml-base (no FMA) computes it.
			q := nearestInt(float32(iscale * v))
			if q > 127 {
				q = 127
			}
			qs[j] = byte(int8(q))
		}
		for j := 0; j < 16; j++ {
			var s int32
			for _, q := range qs[16*j : 16*j+16] {
				s += int32(int8(q))
			}
			put16(b[260+2*j:], uint16(int16(s)))
		}
		putF32(b, 1/iscale)
	}
}

func quantizeRowQ8_0(src []float32, dst []byte) { cur.quantizeQ8_0(src, dst) }
func quantizeRowQ8_K(src []float32, dst []byte) { cur.quantizeQ8_K(src, dst) }
