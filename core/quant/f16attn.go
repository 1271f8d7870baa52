package quant

import "math"

// More of the attention over an F16 cache (see f16.go), in the AVX-512
// build's order: the score of one key, the products of the V rows past the
// last 64-lane block, and the fold of the transposed V lanes into the
// output.

// DotF16x64 is ReduceAdd16 of DotF16Lanes64(q, k): ggml_vec_dot_f16's
// lane part over the first len(k)/64·64 elements, reduced to one float32
// (the float64 tail is the caller's).
func DotF16x64(q []float32, k []uint16) float32 {
	n := len(k) &^ 63
	return cur.dotF16x64(q[:n:n], k[:n:n])
}

func dotF16x64Generic(q []float32, k []uint16) float32 {
	var v [16]float32
	f16Lanes64Generic(q, k, &v)
	return ReduceAdd16(&v)
}

// AxpyF16F64 does acc[i] += float64(a·v[i]) for the halves v (len(v) ≥
// len(acc)): the float32 product widened, then added in float64.
func AxpyF16F64(acc []float64, a float32, v []uint16) {
	cur.axpyF16F64(acc, a, v[:len(acc)])
}

func axpyF16F64Generic(acc []float64, a float32, v []uint16) {
	v = v[:len(acc)]
	for i, h := range v {
		acc[i] += float64(a * F16ToF32(h))
	}
}

// FoldLanes64 finishes ggml_vec_dot_f16 for len(out) dot products whose 64
// float32 lanes are stored transposed, lane-major: lanes[l·d+j] is lane l
// of product j (d = len(out)). For each j the lanes are folded as
// GGML_F32x16_REDUCE does (l, 32+l, 16+l, 48+l → 16), ReduceAdd16 gives
// one float32, and out[j] = float32(that + tail[j]) in float64.
func FoldLanes64(out, lanes []float32, tail []float64) {
	d := len(out)
	cur.foldLanes64(out, lanes[:64*d:64*d], tail[:d:d])
}

func foldLanes64Generic(out, lanes []float32, tail []float64) {
	d := len(out)
	for j := range out {
		var v [16]float32
		for l := range v {
			v[l] = (lanes[l*d+j] + lanes[(32+l)*d+j]) + (lanes[(16+l)*d+j] + lanes[(48+l)*d+j])
		}
		out[j] = float32(float64(ReduceAdd16(&v)) + tail[j])
	}
}

// RoundF16 sets dst[i] to src[i] rounded to F16 and widened back
// (F16ToF32(F32ToF16(src[i]))), as ggml rounds Q for an F16 K cache.
func RoundF16(dst, src []float32) {
	cur.roundF16(dst[:len(src)], src, 1, false)
}

// RoundF16Scaled sets dst[i] to F16ToF32(F32ToF16(src[i]·s)), the product
// rounded to float32 first (the softmax weights for an F16 V cache).
func RoundF16Scaled(dst, src []float32, s float32) {
	cur.roundF16(dst[:len(src)], src, s, true)
}

func roundF16Generic(dst, src []float32, s float32, scaled bool) {
	dst = dst[:len(src)]
	if !scaled {
		for i, v := range src {
			dst[i] = F16ToF32(F32ToF16(v))
		}
		return
	}
	for i, v := range src {
		dst[i] = F16ToF32(F32ToF16(v * s))
	}
}

// The grouped forms: with grouped-query attention the q heads of one KV
// head read the same K and V rows, so these take one cache row for several
// heads at once. Each head's result is, bit for bit, the one-head kernel's.

// DotF16x64Group sets out[g] = DotF16x64(q[g·d:(g+1)·d], k[:d]) for every
// g < len(out): one K row (len(k) ≥ d) against len(out) q rows d floats
// apart.
func DotF16x64Group(out, q []float32, d int, k []uint16) {
	g := len(out)
	if g == 0 {
		return
	}
	n := d &^ 63
	_ = q[:(g-1)*d+n] // the last head's first n elements
	cur.dotF16x64Group(out, q, d, k[:n:n])
}

func dotF16x64GroupGeneric(out, q []float32, d int, k []uint16) {
	n := len(k)
	for g := range out {
		out[g] = dotF16x64Generic(q[g*d:g*d+n:g*d+n], k)
	}
}

// AxpyF16Group does AxpyF16(acc[g·stride:g·stride+len(v)], w[g], v) for
// every g < len(w): one V row updating len(w) accumulators stride floats
// apart.
func AxpyF16Group(acc []float32, stride int, w []float32, v []uint16) {
	g := len(w)
	if g == 0 || len(v) == 0 {
		return
	}
	_ = acc[:(g-1)*stride+len(v)]
	cur.axpyF16Group(acc, stride, w, v)
}

func axpyF16GroupGeneric(acc []float32, stride int, w []float32, v []uint16) {
	d := len(v)
	for g, a := range w {
		axpyF16Generic(acc[g*stride:g*stride+d:g*stride+d], a, v)
	}
}

// loopF16x64Group and loopAxpyF16Group make the grouped forms out of a
// level's one-head kernels (same bits; for levels without a grouped twin).
func loopF16x64Group(one func(q []float32, k []uint16) float32) func(out, q []float32, d int, k []uint16) {
	return func(out, q []float32, d int, k []uint16) {
		n := len(k)
		for g := range out {
			out[g] = one(q[g*d:g*d+n:g*d+n], k)
		}
	}
}

func loopAxpyF16Group(one func(acc []float32, a float32, v []uint16)) func(acc []float32, stride int, w []float32, v []uint16) {
	return func(acc []float32, stride int, w []float32, v []uint16) {
		d := len(v)
		for g, a := range w {
			one(acc[g*stride:g*stride+d:g*stride+d], a, v)
		}
	}
}

// SkipWeight is the weight (−0, which a softmax weight never is) that
// AxpyF16Lanes64 leaves out: the entry is skipped, not added as 0·v.
var SkipWeight = math.Float32frombits(0x80000000)

// AxpyF16Lanes64 is the V product of one head over an F16 cache in the
// AVX-512 order, lanes kept transposed (lanes[l·d+i]: lane l of output
// element i, d = len(lanes)/64): for every entry j < len(w) whose weight is
// not SkipWeight (its bits), lanes[(j mod 64)·d + i] += w[j]·v[j·vstride+i]
// for i < d, each lane taking its entries in j order from +0, the product
// rounded and then added as AxpyF16 does; lanes no entry reaches are +0.
// It is AxpyF16 row by row into cleared lanes, with one call for all rows.
func AxpyF16Lanes64(lanes []float32, w []float32, v []uint16, vstride int) {
	d := len(lanes) / 64
	if n := len(w); n > 0 && d > 0 {
		_ = v[(n-1)*vstride+d-1]
	}
	cur.axpyF16Lanes64(lanes[:64*d:64*d], d, w, v, vstride)
}

func axpyF16Lanes64Generic(lanes []float32, d int, w []float32, v []uint16, vstride int) {
	clear(lanes)
	for j, a := range w {
		if math.Float32bits(a) == 0x80000000 {
			continue
		}
		l := (j & 63) * d
		axpyF16Generic(lanes[l:l+d:l+d], a, v[j*vstride:j*vstride+d])
	}
}

// loopAxpyF16Lanes64 makes axpyF16Lanes64 out of a level's AxpyF16 (same
// bits; for levels without a twin of it).
func loopAxpyF16Lanes64(one func(acc []float32, a float32, v []uint16)) func(lanes []float32, d int, w []float32, v []uint16, vstride int) {
	return func(lanes []float32, d int, w []float32, v []uint16, vstride int) {
		clear(lanes)
		for j, a := range w {
			if math.Float32bits(a) == 0x80000000 {
				continue
			}
			l := (j & 63) * d
			one(lanes[l:l+d:l+d], a, v[j*vstride:j*vstride+d])
		}
	}
}
