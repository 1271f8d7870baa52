package quant

// Generic reference bodies of the dot-product kernels. Integer parts are
// exact and identical to ggml's; per-block float scaling and accumulation are
// float32 like ggml's, so only the order of float32 additions can differ
// from the x86 SIMD build (a few ulps of the result).

// The non-repacked quantized dots follow ggml's AVX2 vec_dot: each block's
// 32 products summed in integers into 8 lanes of 4 consecutive elements
// (mul_sum_i8_pairs_float), each lane accumulated with an FMA of the
// block's float scale, and the lanes folded by hsum_float_8 at the end.
// Scalar float updates written a*b + c in ggml's C are contracted to FMA by
// its compiler, so they are fma32 here.

// lanes8 adds one block: acc[l] = fma(d, Σ e[k]·q[k] for k in 4l..4l+3, acc[l]).
func lanes8(acc *[8]float32, d float32, e *[32]int32, q []byte) {
	q = q[:32]
	for l := 0; l < 8; l++ {
		var s int32
		for k := 4 * l; k < 4*l+4; k++ {
			s += e[k] * int32(int8(q[k]))
		}
		acc[l] = fma32(d, float32(s), acc[l])
	}
}

// hsum8 is hsum_float_8: the 128-bit halves added, then lanes (0+2) and
// (1+3), then those two.
func hsum8(acc *[8]float32) float32 {
	r0, r1, r2, r3 := acc[4]+acc[0], acc[5]+acc[1], acc[6]+acc[2], acc[7]+acc[3]
	return (r0 + r2) + (r1 + r3)
}

// fma32 is FMA32 (a·b+c rounded once).
func fma32(a, b, c float32) float32 { return FMA32(a, b, c) }

// reduceHadd folds 32 partial sums the way GGML_F32x8_REDUCE does for four
// 8-lane AVX vectors acc[0:8], acc[8:16], acc[16:24], acc[24:32]: v0+=v2,
// v1+=v3, v0+=v1, then the two 128-bit halves, then two horizontal adds.
func reduceHadd(acc *[32]float32) float32 {
	var v [8]float32
	for l := range v {
		v[l] = (acc[l] + acc[16+l]) + (acc[8+l] + acc[24+l])
	}
	t0, t1, t2, t3 := v[0]+v[4], v[1]+v[5], v[2]+v[6], v[3]+v[7]
	return (t0 + t1) + (t2 + t3)
}

// reduceMovehl folds 32 partial sums like ggml_vec_dot_bf16's AVX2 tail:
// c1 = (c1+c3)+(c2+c4), the 128-bit halves added, then movehl and movehdup
// adds, which pair lanes (0,2),(1,3) before the final add.
func reduceMovehl(acc *[32]float32) float32 {
	var v [8]float32
	for l := range v {
		v[l] = (acc[l] + acc[16+l]) + (acc[8+l] + acc[24+l])
	}
	t0, t1, t2, t3 := v[0]+v[4], v[1]+v[5], v[2]+v[6], v[3]+v[7]
	return (t0 + t2) + (t1 + t3)
}

// dotF32Generic is ggml_vec_dot_f32 on AVX:
//
//	acc[k] += a[i+k]*b[i+k]   for each full step of 32 (lane k = 8·vector + lane)
//	sum = reduceHadd(acc); sum += a[i]*b[i] for the tail, all float32.
//
// ggml's x86 build fuses the lane update into an FMA; this body rounds the
// product and the sum separately (the float32 conversions keep Go from
// fusing on FMA targets, so every GOAMD64 and GOARCH gives the same bits),
// which can differ from ggml by an ulp per step.
func dotF32Generic(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	np := n &^ 31
	var acc [32]float32
	for i := 0; i < np; i += 32 {
		aa := a[i : i+32 : i+32]
		bb := b[i : i+32 : i+32]
		for k := range acc {
			acc[k] += float32(aa[k] * bb[k])
		}
	}
	sum := reduceHadd(&acc)
	for i := np; i < n; i++ {
		sum += float32(a[i] * b[i])
	}
	return sum
}

// dotF32BytesGeneric is dotF32Generic over little-endian float32 bytes.
func dotF32BytesGeneric(w, x []byte) float32 {
	n := len(w) / 4
	x = x[:4*n]
	np := n &^ 31
	var acc [32]float32
	for i := 0; i < np; i += 32 {
		ww := w[4*i : 4*i+128 : 4*i+128]
		xx := x[4*i : 4*i+128 : 4*i+128]
		for k := range acc {
			acc[k] += float32(f32le(ww[4*k:]) * f32le(xx[4*k:]))
		}
	}
	sum := reduceHadd(&acc)
	for i := np; i < n; i++ {
		sum += float32(f32le(w[4*i:]) * f32le(x[4*i:]))
	}
	return sum
}

// dotF16Generic is ggml_vec_dot_f16 on AVX2+F16C: both rows widened to
// float32, 32 float32 lanes accumulated and reduced as reduceHadd, the tail
// added in float64 (ggml_float), the result rounded to float32. A product of
// two halves is exact in float32, so ggml's FMA and this multiply-then-add
// agree bit for bit: float32 lanes are what ggml does, hence what we do.
func dotF16Generic(w, x []byte) float32 {
	n := len(w) / 2
	x = x[:2*n]
	np := n &^ 31
	var acc [32]float32
	for i := 0; i < np; i += 32 {
		ww := w[2*i : 2*i+64 : 2*i+64]
		xx := x[2*i : 2*i+64 : 2*i+64]
		for k := range acc {
			acc[k] += f16le(ww[2*k:]) * f16le(xx[2*k:])
		}
	}
	sum := float64(reduceHadd(&acc))
	for i := np; i < n; i++ {
		sum += float64(f16le(w[2*i:]) * f16le(x[2*i:]))
	}
	return float32(sum)
}

// dotBF16Generic is ggml_vec_dot_bf16 on AVX2 (no AVX512-BF16): four 8-lane
// float32 accumulators updated with multiply then add (products of two
// bfloat16 are exact in float32's range; the conversion keeps the rounding
// at its edges where Go would fuse), reduced as reduceMovehl, tail in
// float64.
func dotBF16Generic(w, x []byte) float32 {
	n := len(w) / 2
	x = x[:2*n]
	np := n &^ 31
	var acc [32]float32
	for i := 0; i < np; i += 32 {
		ww := w[2*i : 2*i+64 : 2*i+64]
		xx := x[2*i : 2*i+64 : 2*i+64]
		for k := range acc {
			acc[k] += float32(BF16ToF32(le16(ww[2*k:])) * BF16ToF32(le16(xx[2*k:])))
		}
	}
	sum := float64(reduceMovehl(&acc))
	for i := np; i < n; i++ {
		sum += float64(BF16ToF32(le16(w[2*i:])) * BF16ToF32(le16(x[2*i:])))
	}
	return float32(sum)
}

// dotQ4_0Q8_0Generic: per block, sumi = Σ (nibble−8)·q8 over 32 pairs (low
// nibbles pair with x[0:16], high with x[16:32]); sum += sumi·(d_w·d_x).
func dotQ4_0Q8_0Generic(w, x []byte) float32 {
	nb := len(w) / bytesQ4
	x = x[:nb*bytesQ80]
	var sum float32
	for i := 0; i < nb; i++ {
		wb := w[i*bytesQ4 : i*bytesQ4+bytesQ4 : i*bytesQ4+bytesQ4]
		xb := x[i*bytesQ80 : i*bytesQ80+bytesQ80 : i*bytesQ80+bytesQ80]
		// The conversion keeps Go from fusing into an FMA on FMA targets:
		// the reference rounds the product, then the sum.
		sum += float32(float32(q4_0Sumi(wb[2:18:18], xb)) * (f16le(wb) * f16le(xb)))
	}
	return sum
}

// q4_0Sumi is a Q4_0 block's integer sum against a Q8_0 block xb: the 16
// quant bytes qw, low nibbles paired with xb's first 16 quants, high with
// the last 16, each nibble less 8.
func q4_0Sumi(qw, xb []byte) int32 {
	qw = qw[:16:16]
	qx := xb[2:34:34]
	var sumi int32
	for j := 0; j < 16; j++ {
		b := qw[j]
		sumi += (int32(b&0xf) - 8) * int32(int8(qx[j]))
		sumi += (int32(b>>4) - 8) * int32(int8(qx[j+16]))
	}
	return sumi
}

// dotQ4_1Q8_1Generic: sumi = Σ nibble·q8; sum += (d_w·d_x)·sumi + m_w·s_x,
// where s_x = d_x·Σq8 was stored by the Q8_1 quantizer.
func dotQ4_1Q8_1Generic(w, x []byte) float32 {
	nb := len(w) / bytesQ41
	x = x[:nb*bytesQ81]
	var acc float32
	for i := 0; i < nb; i++ {
		wb := w[i*bytesQ41 : i*bytesQ41+bytesQ41 : i*bytesQ41+bytesQ41]
		xb := x[i*bytesQ81 : i*bytesQ81+bytesQ81 : i*bytesQ81+bytesQ81]
		qw := wb[4:20:20]
		qx := xb[4:36:36]
		var sumi int32
		for j := 0; j < 16; j++ {
			b := qw[j]
			sumi += int32(b&0xf) * int32(int8(qx[j]))
			sumi += int32(b>>4) * int32(int8(qx[j+16]))
		}
		acc = fma32(f16le(wb)*f16le(xb), float32(sumi), acc)
		acc = fma32(f16le(wb[2:]), f16le(xb[2:]), acc)
	}
	return acc
}

// dotQ5_0Q8_0Generic: the fifth bit of element j comes from bit j of qh
// (elements 0..15 low nibbles, 16..31 high nibbles); values are biased by 16.
func dotQ5_0Q8_0Generic(w, x []byte) float32 {
	nb := len(w) / bytesQ50
	x = x[:nb*bytesQ80]
	var acc [8]float32
	for i := 0; i < nb; i++ {
		wb := w[i*bytesQ50 : i*bytesQ50+bytesQ50 : i*bytesQ50+bytesQ50]
		xb := x[i*bytesQ80 : i*bytesQ80+bytesQ80 : i*bytesQ80+bytesQ80]
		qh := uint32(wb[2]) | uint32(wb[3])<<8 | uint32(wb[4])<<16 | uint32(wb[5])<<24
		qw := wb[6:22:22]
		var e [32]int32
		for j := 0; j < 16; j++ {
			b := uint32(qw[j])
			e[j] = int32(b&0xf|(qh>>j<<4)&0x10) - 16
			e[j+16] = int32(b>>4|(qh>>(j+12))&0x10) - 16
		}
		lanes8(&acc, f16le(wb)*f16le(xb), &e, xb[2:34:34])
	}
	return hsum8(&acc)
}

// dotQ5_1Q8_1Generic: unsigned 5-bit values plus the min term m_w·s_x.
func dotQ5_1Q8_1Generic(w, x []byte) float32 {
	nb := len(w) / bytesQ51
	x = x[:nb*bytesQ81]
	var acc [8]float32
	var summs float32
	for i := 0; i < nb; i++ {
		wb := w[i*bytesQ51 : i*bytesQ51+bytesQ51 : i*bytesQ51+bytesQ51]
		xb := x[i*bytesQ81 : i*bytesQ81+bytesQ81 : i*bytesQ81+bytesQ81]
		summs = fma32(f16le(wb[2:]), f16le(xb[2:]), summs)
		qh := uint32(wb[4]) | uint32(wb[5])<<8 | uint32(wb[6])<<16 | uint32(wb[7])<<24
		qw := wb[8:24:24]
		var e [32]int32
		for j := 0; j < 16; j++ {
			b := uint32(qw[j])
			e[j] = int32(b&0xf | (qh>>j<<4)&0x10)
			e[j+16] = int32(b>>4 | (qh>>(j+12))&0x10)
		}
		lanes8(&acc, f16le(wb)*f16le(xb), &e, xb[4:36:36])
	}
	return hsum8(&acc) + summs
}

// dotQ8_0Q8_0Generic: sumi = Σ q8_w·q8_x; sum += sumi·(d_w·d_x).
func dotQ8_0Q8_0Generic(w, x []byte) float32 {
	nb := len(w) / bytesQ80
	x = x[:nb*bytesQ80]
	var sum float32
	for i := 0; i < nb; i++ {
		wb := w[i*bytesQ80 : i*bytesQ80+bytesQ80 : i*bytesQ80+bytesQ80]
		xb := x[i*bytesQ80 : i*bytesQ80+bytesQ80 : i*bytesQ80+bytesQ80]
		qw := wb[2:34:34]
		qx := xb[2:34:34]
		var sumi int32
		for j := 0; j < 32; j++ {
			sumi += int32(int8(qw[j])) * int32(int8(qx[j]))
		}
		sum = fma32(float32(sumi), f16le(wb)*f16le(xb), sum)
	}
	return sum
}

// q8KBsum is bsums[j] of a Q8_K block: the sum of its quants 16j..16j+15.
func q8KBsum(xb []byte, j int) int32 { return int32(int16(le16(xb[260+2*j:]))) }

// dotQ2_KQ8_KGeneric: 16 sub-blocks of 16 with a 4-bit scale (low nibble)
// and 4-bit min (high nibble). Per block:
//
//	isum  = Σ_sub scale_sub · Σ q2·q8          (q2 in 0..3)
//	summs = Σ_sub min_sub · bsums[sub]
//	sum  += (d_x·d)·isum − (d_x·dmin)·summs
func dotQ2_KQ8_KGeneric(w, x []byte) float32 {
	nb := len(w) / bytesQ2K
	x = x[:nb*bytesQ8K]
	var acc [8]float32
	for i := 0; i < nb; i++ {
		wb := w[i*bytesQ2K : i*bytesQ2K+bytesQ2K : i*bytesQ2K+bytesQ2K]
		xb := x[i*bytesQ8K : i*bytesQ8K+bytesQ8K : i*bytesQ8K+bytesQ8K]
		scales := wb[0:16:16]
		q8 := xb[4:260:260]
		dx := f32le(xb)
		d := dx * f16le(wb[80:])
		dmin := -dx * f16le(wb[82:])
		// prod = madd(mins, bsums): lane l pairs sub-blocks 2l and 2l+1.
		for l := 0; l < 8; l++ {
			p := int32(scales[2*l]>>4)*q8KBsum(xb, 2*l) + int32(scales[2*l+1]>>4)*q8KBsum(xb, 2*l+1)
			acc[l] = fma32(dmin, float32(p), acc[l])
		}
		// sumi: lane l holds elements 4l..4l+3 of every 32-element chunk,
		// each sub-block of 16 times its scale.
		var sumi [8]int32
		for half := 0; half < 2; half++ {
			q := wb[16+32*half : 48+32*half : 48+32*half]
			for k := 0; k < 4; k++ {
				shift := uint(2 * k)
				y := q8[128*half+32*k : 128*half+32*k+32 : 128*half+32*k+32]
				for l := 0; l < 8; l++ {
					sc := int32(scales[8*half+2*k+l/4] & 0xf)
					var s int32
					for m := 4 * l; m < 4*l+4; m++ {
						s += int32(int8(y[m])) * int32((q[m]>>shift)&3)
					}
					sumi[l] += sc * s
				}
			}
		}
		for l := 0; l < 8; l++ {
			acc[l] = fma32(d, float32(sumi[l]), acc[l])
		}
	}
	return hsum8(&acc)
}

// dotQ3_KQ8_KGeneric: 16 sub-blocks of 16, signed 6-bit scales; each value
// is its 2 low bits minus 4 unless its hmask bit is set. The hmask bit of
// element e (in half h, group j of 32, offset l) is bit 4h+j of hmask[l].
//
//	sum += (d·d_x) · Σ_sub scale_sub · Σ q3·q8
func dotQ3_KQ8_KGeneric(w, x []byte) float32 {
	nb := len(w) / bytesQ3K
	x = x[:nb*bytesQ8K]
	var sum float32
	for i := 0; i < nb; i++ {
		wb := w[i*bytesQ3K : i*bytesQ3K+bytesQ3K : i*bytesQ3K+bytesQ3K]
		xb := x[i*bytesQ8K : i*bytesQ8K+bytesQ8K : i*bytesQ8K+bytesQ8K]
		hmask := wb[0:32:32]
		scales := wb[96:108:108]
		q8 := xb[4:260:260]
		var isum int32
		for half := 0; half < 2; half++ {
			q := wb[32+32*half : 64+32*half : 64+32*half]
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				bit := uint(4*half + j)
				y := q8[128*half+32*j : 128*half+32*j+32 : 128*half+32*j+32]
				var s0, s1 int32
				for l := 0; l < 16; l++ {
					v0 := int32((q[l]>>shift)&3) - 4*int32((hmask[l]>>bit)&1^1)
					v1 := int32((q[l+16]>>shift)&3) - 4*int32((hmask[l+16]>>bit)&1^1)
					s0 += v0 * int32(int8(y[l]))
					s1 += v1 * int32(int8(y[l+16]))
				}
				is := 8*half + 2*j
				isum += scaleQ3K(is, scales)*s0 + scaleQ3K(is+1, scales)*s1
			}
		}
		sum += float32((f16le(wb[108:]) * f32le(xb)) * float32(isum)) // unfused on every target
	}
	return sum
}

// dotQ4_KQ8_KGeneric: 8 sub-blocks of 32 with 6-bit scales and mins; group
// j of 64 holds sub-block 2j in the low nibbles and 2j+1 in the high ones.
//
//	sum += (d_x·d)·Σ sc·Σ q4·q8 − (d_x·dmin)·Σ m·(bsums[2s]+bsums[2s+1])
func dotQ4_KQ8_KGeneric(w, x []byte) float32 {
	nb := len(w) / bytesQ4K
	x = x[:nb*bytesQ8K]
	var sum float32
	for i := 0; i < nb; i++ {
		wb := w[i*bytesQ4K : i*bytesQ4K+bytesQ4K : i*bytesQ4K+bytesQ4K]
		xb := x[i*bytesQ8K : i*bytesQ8K+bytesQ8K : i*bytesQ8K+bytesQ8K]
		scales := wb[4:16:16]
		q8 := xb[4:260:260]
		var isum, summs int32
		for j := 0; j < 4; j++ {
			sc0, m0 := scaleMinK4(2*j, scales)
			sc1, m1 := scaleMinK4(2*j+1, scales)
			summs += int32(m0)*(q8KBsum(xb, 4*j)+q8KBsum(xb, 4*j+1)) +
				int32(m1)*(q8KBsum(xb, 4*j+2)+q8KBsum(xb, 4*j+3))
			q := wb[16+32*j : 48+32*j : 48+32*j]
			y := q8[64*j : 64*j+64 : 64*j+64]
			var s0, s1 int32
			for l := 0; l < 32; l++ {
				s0 += int32(q[l]&0xf) * int32(int8(y[l]))
				s1 += int32(q[l]>>4) * int32(int8(y[l+32]))
			}
			isum += int32(sc0)*s0 + int32(sc1)*s1
		}
		dx := f32le(xb)
		d := dx * f16le(wb)
		dmin := dx * f16le(wb[2:])
		sum += float32(float32(d*float32(isum)) - float32(dmin*float32(summs))) // unfused, as the reference
	}
	return sum
}

// dotQ5_KQ8_KGeneric: Q4_K plus a fifth bit per value: bit 2j of qh[l] for
// the low-nibble sub-block of group j, bit 2j+1 for the high one.
func dotQ5_KQ8_KGeneric(w, x []byte) float32 {
	nb := len(w) / bytesQ5K
	x = x[:nb*bytesQ8K]
	var acc float32
	for i := 0; i < nb; i++ {
		wb := w[i*bytesQ5K : i*bytesQ5K+bytesQ5K : i*bytesQ5K+bytesQ5K]
		xb := x[i*bytesQ8K : i*bytesQ8K+bytesQ8K : i*bytesQ8K+bytesQ8K]
		scales := wb[4:16:16]
		qh := wb[16:48:48]
		q8 := xb[4:260:260]
		var isum, mins int32
		for j := 0; j < 4; j++ {
			sc0, m0 := scaleMinK4(2*j, scales)
			sc1, m1 := scaleMinK4(2*j+1, scales)
			mins += int32(m0)*(q8KBsum(xb, 4*j)+q8KBsum(xb, 4*j+1)) +
				int32(m1)*(q8KBsum(xb, 4*j+2)+q8KBsum(xb, 4*j+3))
			q := wb[48+32*j : 80+32*j : 80+32*j]
			y := q8[64*j : 64*j+64 : 64*j+64]
			b0, b1 := uint(2*j), uint(2*j+1)
			var s0, s1 int32
			for l := 0; l < 32; l++ {
				v0 := int32(q[l]&0xf) | int32((qh[l]>>b0)&1)<<4
				v1 := int32(q[l]>>4) | int32((qh[l]>>b1)&1)<<4
				s0 += v0 * int32(int8(y[l]))
				s1 += v1 * int32(int8(y[l+32]))
			}
			isum += int32(sc0)*s0 + int32(sc1)*s1
		}
		dx := f32le(xb)
		acc = fma32(float32(isum), f16le(wb)*dx, acc)
		acc = fma32(-float32(mins), f16le(wb[2:])*dx, acc)
	}
	return acc
}

// dotQ6_KQ8_KGeneric: 16 sub-blocks of 16 with int8 scales; in each half of
// 128, ql[l] holds elements l (low nibble) and l+64 (high), ql[l+32] holds
// l+32 and l+96, and qh[l] their top two bits at shifts 0, 4, 2, 6. Values
// are biased by 32.
//
//	sum += (d·d_x) · Σ_sub scale_sub · Σ q6·q8
func dotQ6_KQ8_KGeneric(w, x []byte) float32 {
	nb := len(w) / bytesQ6K
	x = x[:nb*bytesQ8K]
	var sum float32
	for i := 0; i < nb; i++ {
		wb := w[i*bytesQ6K : i*bytesQ6K+bytesQ6K : i*bytesQ6K+bytesQ6K]
		xb := x[i*bytesQ8K : i*bytesQ8K+bytesQ8K : i*bytesQ8K+bytesQ8K]
		scales := wb[192:208:208]
		q8 := xb[4:260:260]
		var isum int32
		for half := 0; half < 2; half++ {
			ql := wb[64*half : 64*half+64 : 64*half+64]
			qh := wb[128+32*half : 160+32*half : 160+32*half]
			y := q8[128*half : 128*half+128 : 128*half+128]
			sc := scales[8*half : 8*half+8 : 8*half+8]
			for sub := 0; sub < 2; sub++ {
				var s1, s2, s3, s4 int32
				for l := 16 * sub; l < 16*sub+16; l++ {
					h := qh[l]
					q1 := int32(ql[l]&0xf|(h&3)<<4) - 32
					q2 := int32(ql[l+32]&0xf|(h>>2&3)<<4) - 32
					q3 := int32(ql[l]>>4|(h>>4&3)<<4) - 32
					q4 := int32(ql[l+32]>>4|(h>>6)<<4) - 32
					s1 += q1 * int32(int8(y[l]))
					s2 += q2 * int32(int8(y[l+32]))
					s3 += q3 * int32(int8(y[l+64]))
					s4 += q4 * int32(int8(y[l+96]))
				}
				isum += int32(int8(sc[sub]))*s1 + int32(int8(sc[sub+2]))*s2 +
					int32(int8(sc[sub+4]))*s3 + int32(int8(sc[sub+6]))*s4
			}
		}
		sum += float32((f16le(wb[208:]) * f32le(xb)) * float32(isum)) // unfused, as the reference
	}
	return sum
}
