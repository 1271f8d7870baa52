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
func f16dot64gAVX2(out, q *float32, qstride int, k *uint16, n64, ng int)

//go:noescape
func axpyf16gAVX2(acc *float32, stride int, w *float32, ng int, v *uint16, n8 int)

func dotF16x64GroupAVX2(out, q []float32, d int, k []uint16) {
	g, n := len(out), len(k)
	if g == 0 {
		return
	}
	if n < 64 {
		clear(out) // ReduceAdd16 of sixteen +0 lanes
		return
	}
	_ = q[(g-1)*d+n-1]
	f16dot64gAVX2(&out[0], &q[0], d, &k[0], n/64, g)
}

func axpyF16GroupAVX2(acc []float32, stride int, w []float32, v []uint16) {
	g, d := len(w), len(v)
	if g == 0 || d == 0 {
		return
	}
	_ = acc[(g-1)*stride+d-1]
	n8 := d &^ 7
	if n8 > 0 {
		axpyf16gAVX2(&acc[0], stride, &w[0], g, &v[0], n8/8)
	}
	if n8 < d {
		for h, a := range w {
			a8 := acc[h*stride+n8 : h*stride+d]
			for i, x := range v[n8:] {
				a8[i] += a * F16ToF32(x)
			}
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
