//go:build !noasm

package quant

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
