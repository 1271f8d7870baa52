//go:build !noasm

package quant

import "math"

//go:noescape
func f16dot64AVX2(q *float32, k *uint16, n64 int) float32

//go:noescape
func axpyf16f64AVX2(acc *float64, a float32, v *uint16, n8 int)

//go:noescape
func foldlanes64AVX2(out, lanes *float32, tail *float64, d, n8 int)

func dotF16x64AVX2(q []float32, k []uint16) float32 {
	if len(k) < 64 {
		return 0
	}
	_ = q[len(k)-1]
	return f16dot64AVX2(&q[0], &k[0], len(k)/64)
}

func axpyF16F64AVX2(acc []float64, a float32, v []uint16) {
	n8 := len(acc) &^ 7
	v = v[:len(acc)]
	if n8 > 0 {
		axpyf16f64AVX2(&acc[0], a, &v[0], n8/8)
	}
	for i := n8; i < len(acc); i++ {
		acc[i] += float64(a * F16ToF32(v[i]))
	}
}

func foldLanes64AVX2(out, lanes []float32, tail []float64) {
	d := len(out)
	n8 := d / 8
	if n8 > 0 {
		foldlanes64AVX2(&out[0], &lanes[0], &tail[0], d, n8)
	}
	for j := 8 * n8; j < d; j++ {
		var v [16]float32
		for l := range v {
			v[l] = (lanes[l*d+j] + lanes[(32+l)*d+j]) + (lanes[(16+l)*d+j] + lanes[(48+l)*d+j])
		}
		out[j] = float32(float64(ReduceAdd16(&v)) + tail[j])
	}
}

//go:noescape
func roundf16AVX2(dst, src *float32, s float32, scaled bool, n8 int)

func roundF16AVX2(dst, src []float32, s float32, scaled bool) {
	dst = dst[:len(src)]
	n8 := len(src) &^ 7
	if n8 > 0 {
		roundf16AVX2(&dst[0], &src[0], s, scaled, n8/8)
	}
	roundF16Generic(dst[n8:], src[n8:], s, scaled)
}

//go:noescape
func cvtf16AVX2(dst *byte, src *float32, n8 int)

// quantizeF16AVX2 is quantizeF16Generic with VCVTPS2PH (round to nearest
// even, NaN payloads kept as F32ToF16 keeps them) for the groups of 8.
func quantizeF16AVX2(src []float32, dst []byte) {
	dst = dst[:2*len(src)]
	n8 := len(src) &^ 7
	if n8 > 0 {
		cvtf16AVX2(&dst[0], &src[0], n8/8)
	}
	quantizeF16Generic(src[n8:], dst[2*n8:])
}

//go:noescape
func f16dot64gAVX2(out *float32, ostride int, q *float32, qstride int, k *uint16, n64, ng int)

//go:noescape
func f16dot64r1AVX2(out *float32, ostride int, q *float32, ng int, k *uint16, kstride, nrows int)

func dotF16x64RowsAVX2(out []float32, ostride int, q []float32, ng, d int, k []uint16, kstride, nrows int) {
	if ng <= 0 || nrows <= 0 {
		return
	}
	_ = out[(ng-1)*ostride+nrows-1]
	_ = k[:(nrows-1)*kstride+d]
	switch n64 := d / 64; {
	case n64 == 0:
		for g := 0; g < ng; g++ {
			clear(out[g*ostride : g*ostride+nrows]) // ReduceAdd16 of sixteen +0 lanes
		}
	case n64 == 1 && d == 64:
		_ = q[:ng*64]
		f16dot64r1AVX2(&out[0], ostride, &q[0], ng, &k[0], kstride, nrows)
	default:
		_ = q[(ng-1)*d+64*n64-1]
		for j := 0; j < nrows; j++ {
			f16dot64gAVX2(&out[j], ostride, &q[0], d, &k[j*kstride], n64, ng)
		}
	}
}

//go:noescape
func f16lanes64axpyAVX2(lanes *float32, d int, w *float32, v *uint16, vstride, nrows, n8 int)

func axpyF16Lanes64AVX2(lanes []float32, d int, w []float32, v []uint16, vstride int) {
	n := len(w)
	if n == 0 || d == 0 {
		clear(lanes)
		return
	}
	_ = v[(n-1)*vstride+d-1]
	n8 := d / 8
	if n8 > 0 {
		f16lanes64axpyAVX2(&lanes[0], d, &w[0], &v[0], vstride, n, n8)
	}
	if c := 8 * n8; c < d {
		for l := 0; l < 64; l++ {
			clear(lanes[l*d+c : l*d+d])
		}
		for j, a := range w {
			if math.Float32bits(a) == 0x80000000 {
				continue
			}
			l := (j & 63) * d
			axpyF16Generic(lanes[l+c:l+d:l+d], a, v[j*vstride+c:j*vstride+d])
		}
	}
}

//go:noescape
func f16f64rowsAVX2(acc *float64, w *float32, v *uint16, vstride, nrows, n8 int)

func axpyF16F64RowsAVX2(acc []float64, w []float32, v []uint16, vstride int) {
	n, d := len(w), len(acc)
	if n == 0 || d == 0 {
		return
	}
	_ = v[(n-1)*vstride+d-1]
	n8 := d / 8
	if n8 > 0 {
		f16f64rowsAVX2(&acc[0], &w[0], &v[0], vstride, n, n8)
	}
	if c := 8 * n8; c < d {
		axpyF16F64RowsGeneric(acc[c:], w, v[c:], vstride)
	}
}

//go:noescape
func f16dot64q4AVX512(out *float32, ostride int, q *float32, k *uint16, kstride, nblk int)

// dotF16x64RowsAVX512 is dotF16x64RowsAVX2 with head dimension 64 taken
// four heads and four K rows at a time by f16dot64q4AVX512 (the same bits
// as f16dot64r1AVX2); the other shapes, heads and rows left over by
// dotF16x64RowsAVX2.
func dotF16x64RowsAVX512(out []float32, ostride int, q []float32, ng, d int, k []uint16, kstride, nrows int) {
	if d != 64 || ng < 4 || nrows < 4 {
		dotF16x64RowsAVX2(out, ostride, q, ng, d, k, kstride, nrows)
		return
	}
	_ = out[(ng-1)*ostride+nrows-1]
	_ = q[:ng*64]
	_ = k[:(nrows-1)*kstride+64]
	nblk := nrows / 4
	g := 0
	for ; g+4 <= ng; g += 4 {
		f16dot64q4AVX512(&out[g*ostride], ostride, &q[g*64], &k[0], kstride, nblk)
	}
	if g < ng {
		dotF16x64RowsAVX2(out[g*ostride:], ostride, q[g*64:], ng-g, 64, k, kstride, 4*nblk)
	}
	if r := 4 * nblk; r < nrows {
		dotF16x64RowsAVX2(out[r:], ostride, q, ng, 64, k[r*kstride:], kstride, nrows-r)
	}
}

//go:noescape
func f16lanes64axpyAVX512(lanes *float32, d int, w *float32, v *uint16, vstride, nrows, n64 int)

//go:noescape
func f16lanes64x4axpyAVX512(lanes *float32, w *float32, wstride int, v *uint16, vstride, nrows int)

// axpyF16Lanes64HeadsAVX512 takes head dimension 64 four heads at a time
// (f16lanes64x4axpyAVX512: each V row converted once for the four, each
// head's lanes as f16lanes64axpyAVX512 sums them, the same bits); other
// shapes and the heads left over head by head.
func axpyF16Lanes64HeadsAVX512(lanes []float32, ng, d int, w []float32, wstride, n int, v []uint16, vstride int) {
	g := 0
	if d == 64 && n > 0 {
		_ = lanes[ng*64*64-1]
		_ = w[(ng-1)*wstride+n-1]
		_ = v[(n-1)*vstride+63]
		for ; g+4 <= ng; g += 4 {
			f16lanes64x4axpyAVX512(&lanes[g*64*64], &w[g*wstride], wstride, &v[0], vstride, n)
		}
	}
	if g < ng {
		axpyF16Lanes64HeadsLoop(lanes[g*64*d:], ng-g, d, w[g*wstride:], wstride, n, v, vstride)
	}
}

// axpyF16Lanes64AVX512 is axpyF16Lanes64AVX2 with head dimensions that are
// whole groups of 64 columns taken sixteen columns a ZMM
// (f16lanes64axpyAVX512, the same bits); the others by the AVX2 kernel.
func axpyF16Lanes64AVX512(lanes []float32, d int, w []float32, v []uint16, vstride int) {
	n := len(w)
	if n == 0 || d == 0 || d%64 != 0 {
		axpyF16Lanes64AVX2(lanes, d, w, v, vstride)
		return
	}
	_ = lanes[64*d-1]
	_ = v[(n-1)*vstride+d-1]
	f16lanes64axpyAVX512(&lanes[0], d, &w[0], &v[0], vstride, n, d/64)
}
