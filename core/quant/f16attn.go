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

// The many-row forms: one call for all the K (or V) rows a head reads, and
// with grouped-query attention for all the q heads of one KV head, which
// read the same K rows. Each head's results are, bit for bit, the one-head,
// one-row kernels'.

// DotF16x64Rows sets out[g·ostride + j] = DotF16x64(q[g·d:(g+1)·d],
// k[j·kstride:j·kstride+d]) for every head g < ng and K row j < nrows:
// the K rows of one KV head against its ng q rows (d floats apart).
func DotF16x64Rows(out []float32, ostride int, q []float32, ng, d int, k []uint16, kstride, nrows int) {
	if ng <= 0 || nrows <= 0 {
		return
	}
	_ = out[(ng-1)*ostride+nrows-1]
	_ = q[:ng*d]
	_ = k[:(nrows-1)*kstride+d]
	cur.dotF16x64Rows(out, ostride, q, ng, d, k, kstride, nrows)
}

func dotF16x64RowsGeneric(out []float32, ostride int, q []float32, ng, d int, k []uint16, kstride, nrows int) {
	n := d &^ 63
	for j := 0; j < nrows; j++ {
		kr := k[j*kstride : j*kstride+n : j*kstride+n]
		for g := 0; g < ng; g++ {
			out[g*ostride+j] = dotF16x64Generic(q[g*d:g*d+n:g*d+n], kr)
		}
	}
}

// loopF16x64Rows makes dotF16x64Rows out of a level's one-head kernel
// (same bits; for levels without a twin).
func loopF16x64Rows(one func(q []float32, k []uint16) float32) func(out []float32, ostride int, q []float32, ng, d int, k []uint16, kstride, nrows int) {
	return func(out []float32, ostride int, q []float32, ng, d int, k []uint16, kstride, nrows int) {
		n := d &^ 63
		for j := 0; j < nrows; j++ {
			kr := k[j*kstride : j*kstride+n : j*kstride+n]
			for g := 0; g < ng; g++ {
				out[g*ostride+j] = one(q[g*d:g*d+n:g*d+n], kr)
			}
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

// AxpyF16Lanes64Heads is AxpyF16Lanes64 for ng heads that share one V
// (the q heads of one KV head): head g's lanes at lanes[g·64·d:], d =
// len(lanes)/(64·ng), from its n weights at w[g·wstride:]. The bits are
// those of AxpyF16Lanes64 head by head; a level may convert each V row
// once for the heads together.
func AxpyF16Lanes64Heads(lanes []float32, ng int, w []float32, wstride, n int, v []uint16, vstride int) {
	if ng <= 0 {
		return
	}
	d := len(lanes) / (64 * ng)
	if n > 0 && d > 0 {
		_ = w[(ng-1)*wstride+n-1]
		_ = v[(n-1)*vstride+d-1]
	}
	lanes = lanes[: ng*64*d : ng*64*d]
	if f := cur.axpyF16Lanes64Heads; f != nil {
		f(lanes, ng, d, w, wstride, n, v, vstride)
		return
	}
	axpyF16Lanes64HeadsLoop(lanes, ng, d, w, wstride, n, v, vstride)
}

// axpyF16Lanes64HeadsLoop is AxpyF16Lanes64Heads through the level's
// one-head kernel (the definition of its bits; the levels without a
// kernel of their own for it).
func axpyF16Lanes64HeadsLoop(lanes []float32, ng, d int, w []float32, wstride, n int, v []uint16, vstride int) {
	for g := 0; g < ng; g++ {
		cur.axpyF16Lanes64(lanes[g*64*d:(g+1)*64*d:(g+1)*64*d], d, w[g*wstride:g*wstride+n], v, vstride)
	}
}

// AxpyF16F64Rows is AxpyF16F64(acc, w[j], v[j·vstride:]) for every row
// j < len(w) in order, leaving out the rows whose weight is SkipWeight: the
// float64 tail of one head's V product (the entries past the 64-lane
// blocks), in one call.
func AxpyF16F64Rows(acc []float64, w []float32, v []uint16, vstride int) {
	if n := len(w); n > 0 && len(acc) > 0 {
		_ = v[(n-1)*vstride+len(acc)-1]
	}
	cur.axpyF16F64Rows(acc, w, v, vstride)
}

func axpyF16F64RowsGeneric(acc []float64, w []float32, v []uint16, vstride int) {
	d := len(acc)
	for j, a := range w {
		if math.Float32bits(a) == 0x80000000 {
			continue
		}
		axpyF16F64Generic(acc, a, v[j*vstride:j*vstride+d])
	}
}

// loopAxpyF16F64Rows makes axpyF16F64Rows out of a level's AxpyF16F64.
func loopAxpyF16F64Rows(one func(acc []float64, a float32, v []uint16)) func(acc []float64, w []float32, v []uint16, vstride int) {
	return func(acc []float64, w []float32, v []uint16, vstride int) {
		d := len(acc)
		for j, a := range w {
			if math.Float32bits(a) == 0x80000000 {
				continue
			}
			one(acc, a, v[j*vstride:j*vstride+d])
		}
	}
}
