package quant

import (
	"fmt"
	"math"

	"github.com/minfer/minfer/gguf"
)

// QuantizeWeights encodes src as type t into dst, which must be exactly
// len(src) elements' bytes. It is for generating test and benchmark models:
// each quantizer follows the algorithm of ggml's quantize_row_*_ref (what
// llama-quantize runs when no importance matrix is given), so files written
// with it resemble llama.cpp's. Blocks are independent, so src may hold any
// number of whole rows. Supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
//
// The float arithmetic keeps ggml's operation order and rounds every product
// before it is added (ggml-base is built without FMA), so on normal data the
// bytes agree with llama-quantize's; the round-trip error bounds the tests
// enforce are in quantize_weights_test.go.
func QuantizeWeights(t gguf.GGMLType, src []float32, dst []byte) error {
	switch t {
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16,
		gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1, gguf.TypeQ8_0,
		gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K:
	default:
		return fmt.Errorf("quant: quantize weights to %s: %w", t, ErrUnsupported)
	}
	if err := checkRow("quantize weights", t, len(src), len(dst)); err != nil {
		return err
	}
	switch t {
	case gguf.TypeF32:
		quantizeF32(src, dst)
	case gguf.TypeF16:
		quantizeF16(src, dst)
	case gguf.TypeBF16:
		quantizeBF16(src, dst)
	case gguf.TypeQ4_0:
		quantizeQ4_0(src, dst)
	case gguf.TypeQ4_1:
		quantizeQ4_1(src, dst)
	case gguf.TypeQ5_0:
		quantizeQ5_0(src, dst)
	case gguf.TypeQ5_1:
		quantizeQ5_1(src, dst)
	case gguf.TypeQ8_0:
		quantizeQ8_0Ref(src, dst)
	case gguf.TypeQ2_K:
		quantizeQ2_K(src, dst)
	case gguf.TypeQ3_K:
		quantizeQ3_K(src, dst)
	case gguf.TypeQ4_K:
		quantizeQ4_K(src, dst)
	case gguf.TypeQ5_K:
		quantizeQ5_K(src, dst)
	case gguf.TypeQ6_K:
		quantizeQ6_K(src, dst)
	}
	return nil
}

// groupMaxEps is ggml's GROUP_MAX_EPS: a group whose largest magnitude is
// below it is stored as zeros.
const groupMaxEps = 1e-15

func abs32(v float32) float32 { return float32(math.Abs(float64(v))) }

// signedMax returns the element of largest magnitude (the first one on a
// tie) and that magnitude.
func signedMax(x []float32) (extreme, amax float32) {
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, extreme = a, v
		}
	}
	return extreme, amax
}

// minMax returns the smallest and largest element (±MaxFloat32 start, as in
// ggml's Q4_1/Q5_1 reference).
func minMax(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// quantizeQ4_0: d = max/−8 with max the signed extreme, so it maps to −8;
// q = min(15, trunc(x/d + 8.5)).
func quantizeQ4_0(src []float32, dst []byte) {
	for i := 0; i < len(src)/qk; i++ {
		x := src[i*qk : i*qk+qk : i*qk+qk]
		b := dst[i*bytesQ4 : i*bytesQ4+bytesQ4 : i*bytesQ4+bytesQ4]
		extreme, _ := signedMax(x)
		d := extreme / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		put16(b, F32ToF16(d))
		for j := 0; j < 16; j++ {
			x0 := min(15, int32(int8(float32(x[j]*id)+8.5)))
			x1 := min(15, int32(int8(float32(x[j+16]*id)+8.5)))
			b[2+j] = byte(x0) | byte(x1)<<4
		}
	}
}

// quantizeQ4_1: d = (max−min)/15, m = min, q = min(15, trunc((x−min)/d + 0.5)).
func quantizeQ4_1(src []float32, dst []byte) {
	for i := 0; i < len(src)/qk; i++ {
		x := src[i*qk : i*qk+qk : i*qk+qk]
		b := dst[i*bytesQ41 : i*bytesQ41+bytesQ41 : i*bytesQ41+bytesQ41]
		lo, hi := minMax(x)
		d := (hi - lo) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		put16(b, F32ToF16(d))
		put16(b[2:], F32ToF16(lo))
		for j := 0; j < 16; j++ {
			x0 := min(15, int32(int8(float32((x[j]-lo)*id)+0.5)))
			x1 := min(15, int32(int8(float32((x[j+16]-lo)*id)+0.5)))
			b[4+j] = byte(x0) | byte(x1)<<4
		}
	}
}

// quantizeQ5_0: d = max/−16, q = min(31, trunc(x/d + 16.5)), the fifth bit
// of element j in bit j of qh.
func quantizeQ5_0(src []float32, dst []byte) {
	for i := 0; i < len(src)/qk; i++ {
		x := src[i*qk : i*qk+qk : i*qk+qk]
		b := dst[i*bytesQ50 : i*bytesQ50+bytesQ50 : i*bytesQ50+bytesQ50]
		extreme, _ := signedMax(x)
		d := extreme / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		put16(b, F32ToF16(d))
		var qh uint32
		for j := 0; j < 16; j++ {
			x0 := uint32(min(31, int32(int8(float32(x[j]*id)+16.5))))
			x1 := uint32(min(31, int32(int8(float32(x[j+16]*id)+16.5))))
			b[6+j] = byte(x0&0xf) | byte(x1&0xf)<<4
			qh |= (x0 >> 4 & 1) << j
			qh |= (x1 >> 4 & 1) << (j + 16)
		}
		b[2], b[3], b[4], b[5] = byte(qh), byte(qh>>8), byte(qh>>16), byte(qh>>24)
	}
}

// quantizeQ5_1: d = (max−min)/31, m = min, q = trunc((x−min)/d + 0.5).
func quantizeQ5_1(src []float32, dst []byte) {
	for i := 0; i < len(src)/qk; i++ {
		x := src[i*qk : i*qk+qk : i*qk+qk]
		b := dst[i*bytesQ51 : i*bytesQ51+bytesQ51 : i*bytesQ51+bytesQ51]
		lo, hi := minMax(x)
		d := (hi - lo) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		put16(b, F32ToF16(d))
		put16(b[2:], F32ToF16(lo))
		var qh uint32
		for j := 0; j < 16; j++ {
			x0 := uint32(uint8(float32((x[j]-lo)*id) + 0.5))
			x1 := uint32(uint8(float32((x[j+16]-lo)*id) + 0.5))
			b[8+j] = byte(x0&0xf) | byte(x1&0xf)<<4
			qh |= (x0 >> 4 & 1) << j
			qh |= (x1 >> 4 & 1) << (j + 16)
		}
		b[4], b[5], b[6], b[7] = byte(qh), byte(qh>>8), byte(qh>>16), byte(qh>>24)
	}
}

// quantizeQ8_0Ref is quantize_row_q8_0_ref (used for weights): d = amax/127,
// q = roundf(x · (1/d)), ties away from zero. Activations use the AVX2
// rounding instead (quantizeRowQ8_0).
func quantizeQ8_0Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/qk; i++ {
		x := src[i*qk : i*qk+qk : i*qk+qk]
		b := dst[i*bytesQ80 : i*bytesQ80+bytesQ80 : i*bytesQ80+bytesQ80]
		d := amaxOf(x) / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		put16(b, F32ToF16(d))
		for j, v := range x {
			b[2+j] = byte(int8(math.Round(float64(v * id))))
		}
	}
}

// makeQKX2 is ggml's make_qkx2_quants: fit x ≈ scale·L + min (min ≤ 0,
// L in 0..nmax) minimizing the weighted error (absolute if useMAD, squared
// otherwise). It starts from the min/max grid and tries nstep+1 stretched
// grids, each refined by weighted least squares for scale and min. Returns
// the scale and −min.
func makeQKX2(nmax int, x, weights []float32, L, Laux []uint8, rmin, rdelta float32, nstep int, useMAD bool) (scale, negMin float32) {
	n := len(x)
	lo, hi := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < lo {
			lo = x[i]
		}
		if x[i] > hi {
			hi = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if lo > 0 {
		lo = 0
	}
	if hi == lo {
		clear(L[:n])
		return 0, -lo
	}
	errOf := func(d float32) float32 {
		if useMAD {
			return abs32(d)
		}
		return float32(d * d)
	}
	iscale := float32(nmax) / (hi - lo)
	scale = 1 / iscale
	var bestErr float32
	for i := 0; i < n; i++ {
		l := min(int32(nmax), max(0, nearestInt(float32(iscale*(x[i]-lo)))))
		L[i] = uint8(l)
		diff := float32(scale*float32(l)) + lo - x[i]
		bestErr += float32(weights[i] * errOf(diff))
	}
	if nstep < 1 {
		return scale, -lo
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + float32(rdelta*float32(is)) + float32(nmax)) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i := 0; i < n; i++ {
			l := min(int32(nmax), max(0, nearestInt(float32(iscale*(x[i]-lo)))))
			Laux[i] = uint8(l)
			wl := float32(weights[i] * float32(l))
			sumL += wl
			sumL2 += float32(wl * float32(l))
			sumXL += float32(wl * x[i])
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var cur float32
			for i := 0; i < n; i++ {
				diff := float32(thisScale*float32(Laux[i])) + thisMin - x[i]
				cur += float32(weights[i] * errOf(diff))
			}
			if cur < bestErr {
				copy(L[:n], Laux[:n])
				bestErr, scale, lo = cur, thisScale, thisMin
			}
		}
	}
	return scale, -lo
}

// makeQX is ggml's make_qx_quants with rmse_type 1 and no importance
// weights: symmetric levels −nmax..nmax−1 (stored biased by nmax in L),
// weights x², the grid −(nmax + 0.1·is)/max for is in −9..9 searched for the
// best least-squares scale. Returns the scale.
func makeQX(nmax int, x []float32, L []int8) float32 {
	n := len(x)
	extreme, amax := signedMax(x)
	if amax < groupMaxEps {
		clear(L[:n])
		return 0
	}
	quant := func(iscale, v float32) int32 {
		return min(int32(nmax)-1, max(-int32(nmax), nearestInt(float32(iscale*v))))
	}
	sums := func(iscale float32) (sumlx, suml2 float32) {
		for _, v := range x {
			l := float32(quant(iscale, v))
			w := float32(v * v)
			sumlx += float32(float32(w*v) * l)
			suml2 += float32(float32(w*l) * l)
		}
		return sumlx, suml2
	}
	iscale := -float32(nmax) / extreme
	for i, v := range x {
		L[i] = int8(quant(iscale, v) + int32(nmax))
	}
	sumlx, suml2 := sums(iscale)
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := float32(scale * sumlx)
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + float32(0.1*float32(is))) / extreme
		sumlx, suml2 = sums(iscale)
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			for i, v := range x {
				L[i] = int8(quant(iscale, v) + int32(nmax))
			}
			scale = sumlx / suml2
			best = float32(scale * sumlx)
		}
	}
	return scale
}

// makeQ3 is ggml's make_q3_quants with do_rmse: start from the −nmax/max
// grid, then up to five passes that move single levels when that improves
// the weighted (x²) least-squares fit. L is stored biased by nmax.
func makeQ3(nmax int, x []float32, L []int8) float32 {
	n := len(x)
	extreme, amax := signedMax(x)
	if amax < groupMaxEps {
		clear(L[:n])
		return 0
	}
	clampL := func(l int32) int32 { return min(int32(nmax)-1, max(-int32(nmax), l)) }
	iscale := -float32(nmax) / extreme
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampL(nearestInt(float32(iscale * v)))
		L[i] = int8(l)
		w := float32(v * v)
		sumlx += float32(float32(w*v) * float32(l))
		suml2 += float32(float32(w*float32(l)) * float32(l))
	}
	for itry := 0; itry < 5; itry++ {
		changed := 0
		for i, v := range x {
			w := float32(v * v)
			li := float32(L[i])
			slx := sumlx - float32(float32(w*v)*li)
			if slx > 0 {
				sl2 := suml2 - float32(float32(w*li)*li)
				newL := clampL(nearestInt(float32(v*sl2) / slx))
				if newL != int32(L[i]) {
					nl := float32(newL)
					slx += float32(float32(w*v) * nl)
					sl2 += float32(float32(w*nl) * nl)
					if sl2 > 0 && float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
						L[i] = int8(newL)
						sumlx, suml2 = slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range x {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// pack2bit stores 256 two-bit levels the Q2_K/Q3_K way: in each half of 128,
// byte l holds elements l, l+32, l+64, l+96 at bits 0, 2, 4, 6.
func pack2bit(L *[qkK]uint8, qs []byte) {
	for j := 0; j < qkK; j += 128 {
		for l := 0; l < 32; l++ {
			qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
		}
	}
}

// quantizeQ2_K is quantize_row_q2_K_ref: per 16 values a makeQKX2 fit with
// |x| weights and absolute error, scales and mins quantized to 4 bits
// against the block maxima, then the values re-fit to the stored scales.
func quantizeQ2_K(src []float32, dst []byte) {
	var L [qkK]uint8
	var laux [16]uint8
	var weights [16]float32
	var scales, mins [16]float32
	for i := 0; i < len(src)/qkK; i++ {
		x := src[i*qkK : i*qkK+qkK : i*qkK+qkK]
		b := dst[i*bytesQ2K : i*bytesQ2K+bytesQ2K : i*bytesQ2K+bytesQ2K]
		var maxScale, maxMin float32
		for j := 0; j < 16; j++ {
			xs := x[16*j : 16*j+16]
			for l, v := range xs {
				weights[l] = abs32(v)
			}
			scales[j], mins[j] = makeQKX2(3, xs, weights[:], L[16*j:16*j+16], laux[:], -0.5, 0.1, 15, true)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}
		sc := b[0:16:16]
		if maxScale > 0 {
			iscale := 15 / maxScale
			for j := range sc {
				sc[j] = uint8(nearestInt(float32(iscale * scales[j])))
			}
			put16(b[80:], F32ToF16(maxScale/15))
		} else {
			clear(sc)
			put16(b[80:], 0)
		}
		if maxMin > 0 {
			iscale := 15 / maxMin
			for j := range sc {
				sc[j] |= uint8(nearestInt(float32(iscale*mins[j]))) << 4
			}
			put16(b[82:], F32ToF16(maxMin/15))
		} else {
			put16(b[82:], 0)
		}
		dAll, dMin := f16le(b[80:]), f16le(b[82:])
		for j := 0; j < 16; j++ {
			d := dAll * float32(sc[j]&0xf)
			if d == 0 {
				continue
			}
			dm := dMin * float32(sc[j]>>4)
			for l := 0; l < 16; l++ {
				q := nearestInt((x[16*j+l] + dm) / d)
				L[16*j+l] = uint8(min(3, max(0, q)))
			}
		}
		pack2bit(&L, b[16:80:80])
	}
}

// quantizeQ3_K is quantize_row_q3_K_ref: makeQ3 per 16 values, signed
// scales quantized to 6 bits against the largest-magnitude scale, values
// re-fit to −4..3 with the high bit in hmask.
func quantizeQ3_K(src []float32, dst []byte) {
	var L [qkK]int8
	var scales [16]float32
	for i := 0; i < len(src)/qkK; i++ {
		x := src[i*qkK : i*qkK+qkK : i*qkK+qkK]
		b := dst[i*bytesQ3K : i*bytesQ3K+bytesQ3K : i*bytesQ3K+bytesQ3K]
		var maxScale, amax float32
		for j := 0; j < 16; j++ {
			scales[j] = makeQ3(4, x[16*j:16*j+16], L[16*j:16*j+16])
			if a := abs32(scales[j]); a > amax {
				amax, maxScale = a, scales[j]
			}
		}
		sb := b[96:108:108]
		clear(sb)
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := 0; j < 16; j++ {
				l := int32(int8(nearestInt(float32(iscale * scales[j]))))
				l = min(31, max(-32, l)) + 32
				if j < 8 {
					sb[j] = uint8(l & 0xf)
				} else {
					sb[j-8] |= uint8(l&0xf) << 4
				}
				sb[8+j%4] |= uint8(l>>4) << (2 * (j / 4))
			}
			put16(b[108:], F32ToF16(1/iscale))
		} else {
			put16(b[108:], 0)
		}
		dAll := f16le(b[108:])
		for j := 0; j < 16; j++ {
			d := dAll * float32(scaleQ3K(j, sb))
			if d == 0 {
				continue
			}
			for l := 0; l < 16; l++ {
				q := nearestInt(x[16*j+l] / d)
				L[16*j+l] = int8(min(3, max(-4, q)) + 4)
			}
		}
		hmask := b[0:32:32]
		clear(hmask)
		var packed [qkK]uint8
		for j := 0; j < qkK; j++ {
			v := uint8(L[j])
			if v > 3 {
				hmask[j%32] |= 1 << (j / 32)
				v -= 4
			}
			packed[j] = v
		}
		pack2bit(&packed, b[32:96:96])
	}
}

// packScalesK4 stores eight 6-bit scales and mins in the 12-byte Q4_K/Q5_K
// layout that scaleMinK4 reads.
func packScalesK4(ls, lm *[8]uint8, s []byte) {
	for j := 0; j < 8; j++ {
		if j < 4 {
			s[j] = ls[j]
			s[j+4] = lm[j]
		} else {
			s[j+4] = ls[j]&0xf | (lm[j]&0xf)<<4
			s[j-4] |= (ls[j] >> 4) << 6
			s[j] |= (lm[j] >> 4) << 6
		}
	}
}

// fitK4 runs the shared first half of quantize_row_q4_K_ref and
// quantize_row_q5_K_ref on one super-block: per 32 values a makeQKX2 fit
// with weights rms+|x|, 6-bit scales and mins against the block maxima,
// stored into hdr (d, dmin, scales[12]); then every value is re-fit to its
// stored scale and min, into L (0..nmax).
func fitK4(x []float32, hdr []byte, L *[qkK]uint8, nmax int, rmin, rdelta float32, nstep int) {
	var laux [32]uint8
	var weights [32]float32
	var scales, mins [8]float32
	var maxScale, maxMin float32
	for j := 0; j < 8; j++ {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := float32(math.Sqrt(float64(sumX2 / 32)))
		for l, v := range xs {
			weights[l] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQKX2(nmax, xs, weights[:], L[32*j:32*j+32], laux[:], rmin, rdelta, nstep, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	var ls, lm [8]uint8
	for j := 0; j < 8; j++ {
		ls[j] = min(63, uint8(nearestInt(float32(invScale*scales[j]))))
		lm[j] = min(63, uint8(nearestInt(float32(invMin*mins[j]))))
	}
	put16(hdr, F32ToF16(maxScale/63))
	put16(hdr[2:], F32ToF16(maxMin/63))
	packScalesK4(&ls, &lm, hdr[4:16])
	dAll, dMin := f16le(hdr), f16le(hdr[2:])
	for j := 0; j < 8; j++ {
		sc, m := scaleMinK4(j, hdr[4:16])
		d := dAll * float32(sc)
		if d == 0 {
			continue
		}
		dm := dMin * float32(m)
		for l := 0; l < 32; l++ {
			q := nearestInt((x[32*j+l] + dm) / d)
			L[32*j+l] = uint8(min(int32(nmax), max(0, q)))
		}
	}
}

// quantizeQ4_K is quantize_row_q4_K_ref (grid rmin −1, step 0.1, 20 steps).
func quantizeQ4_K(src []float32, dst []byte) {
	var L [qkK]uint8
	for i := 0; i < len(src)/qkK; i++ {
		x := src[i*qkK : i*qkK+qkK : i*qkK+qkK]
		b := dst[i*bytesQ4K : i*bytesQ4K+bytesQ4K : i*bytesQ4K+bytesQ4K]
		fitK4(x, b[0:16], &L, 15, -1, 0.1, 20)
		for j := 0; j < 4; j++ {
			q := b[16+32*j : 48+32*j]
			for l := 0; l < 32; l++ {
				q[l] = L[64*j+l] | L[64*j+l+32]<<4
			}
		}
	}
}

// quantizeQ5_K is quantize_row_q5_K_ref (grid rmin −0.5, step 0.1, 15
// steps); the fifth bit of group j's low/high sub-block goes to bit 2j/2j+1
// of qh[l].
func quantizeQ5_K(src []float32, dst []byte) {
	var L [qkK]uint8
	for i := 0; i < len(src)/qkK; i++ {
		x := src[i*qkK : i*qkK+qkK : i*qkK+qkK]
		b := dst[i*bytesQ5K : i*bytesQ5K+bytesQ5K : i*bytesQ5K+bytesQ5K]
		fitK4(x, b[0:16], &L, 31, -0.5, 0.1, 15)
		qh := b[16:48:48]
		clear(qh)
		for j := 0; j < 4; j++ {
			q := b[48+32*j : 80+32*j]
			for l := 0; l < 32; l++ {
				l1, l2 := L[64*j+l], L[64*j+l+32]
				if l1 > 15 {
					l1 -= 16
					qh[l] |= 1 << (2 * j)
				}
				if l2 > 15 {
					l2 -= 16
					qh[l] |= 1 << (2*j + 1)
				}
				q[l] = l1 | l2<<4
			}
		}
	}
}

// quantizeQ6_K is quantize_row_q6_K_ref: makeQX (nmax 32) per 16 values,
// int8 scales against the largest-magnitude scale (iscale −128/max), values
// re-fit to −32..31.
func quantizeQ6_K(src []float32, dst []byte) {
	var L [qkK]int8
	var scales [16]float32
	for i := 0; i < len(src)/qkK; i++ {
		x := src[i*qkK : i*qkK+qkK : i*qkK+qkK]
		b := dst[i*bytesQ6K : i*bytesQ6K+bytesQ6K : i*bytesQ6K+bytesQ6K]
		var maxScale, maxAbs float32
		for j := 0; j < 16; j++ {
			scales[j] = makeQX(32, x[16*j:16*j+16], L[16*j:16*j+16])
			if a := abs32(scales[j]); a > maxAbs {
				maxAbs, maxScale = a, scales[j]
			}
		}
		if maxAbs < groupMaxEps {
			clear(b)
			continue
		}
		iscale := -128 / maxScale
		put16(b[208:], F32ToF16(1/iscale))
		sc := b[192:208:208]
		for j := range sc {
			sc[j] = byte(int8(min(127, nearestInt(float32(iscale*scales[j])))))
		}
		dAll := f16le(b[208:])
		for j := 0; j < 16; j++ {
			d := dAll * float32(int8(sc[j]))
			if d == 0 {
				continue
			}
			for l := 0; l < 16; l++ {
				q := nearestInt(x[16*j+l] / d)
				L[16*j+l] = int8(min(31, max(-32, q)) + 32)
			}
		}
		for h := 0; h < 2; h++ {
			ql := b[64*h : 64*h+64]
			qh := b[128+32*h : 160+32*h]
			Lh := L[128*h : 128*h+128]
			for l := 0; l < 32; l++ {
				q1, q2, q3, q4 := uint8(Lh[l]), uint8(Lh[l+32]), uint8(Lh[l+64]), uint8(Lh[l+96])
				ql[l] = q1&0xf | (q3&0xf)<<4
				ql[l+32] = q2&0xf | (q4&0xf)<<4
				qh[l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
			}
		}
	}
}
