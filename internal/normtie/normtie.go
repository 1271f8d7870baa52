// Package normtie builds the rows that tell an rms_norm whose float32 mean
// is the serial float64 chain's (ggml's order) from one that sums in
// another order: the CPU's and the CUDA backend's tests both use them.
package normtie

import (
	"math"
	"math/rand/v2"
)

// Row is a row of n = 2^p elements (p ≥ 4) whose serial mean is
// exactly the float32 tie between m = 2 + 2k·2^-22 and its successor (m's
// mantissa is even: the serial chain rounds to m), while a sum in lanes
// lands above the tie (the successor). The big elements (at random
// positions when shuffle, else first) have the squares 2^(p+1),
// k·2^(p−20) (its bits) and 2^(p−23), an odd power as two squares of
// half of it; every other element's square is the even power of two
// 2^e ≤ 2^(p−54) times 1 or about 1.5, under half a double ulp of the big
// sum, so the serial chain drops those that come after the big ones. k
// is the first for which m and its successor give different scales
// 1/sqrt(mean + eps), so the tie reaches the norm's output.
func Row(r *rand.Rand, p int, eps float32, shuffle bool) []float32 {
	scale := func(m float32) float32 { return 1 / float32(math.Sqrt(float64(m+eps))) }
	k := 0
	for ; ; k++ {
		m := 2 + float32(2*k)*0x1p-22
		if scale(m) != scale(math.Nextafter32(m, 4)) {
			break
		}
	}
	var big []float32
	add := func(e int) {
		if e%2 == 0 {
			big = append(big, float32(math.Ldexp(1, e/2)))
		} else {
			h := float32(math.Ldexp(1, (e-1)/2))
			big = append(big, h, h)
		}
	}
	add(p + 1)
	add(p - 23)
	for b := 0; k>>b != 0; b++ {
		if k>>b&1 == 1 {
			add(p - 20 + b)
		}
	}
	n := 1 << p
	e := p - 54
	if e%2 != 0 {
		e--
	}
	tiny := float32(math.Ldexp(1, e/2))
	x := make([]float32, n)
	for i := range x {
		x[i] = tiny
		if r.IntN(2) == 0 {
			x[i] = float32(math.Sqrt(1.5)) * tiny
		}
	}
	if !shuffle {
		copy(x, big)
		return x
	}
	for i, j := range r.Perm(n)[:len(big)] {
		x[j] = big[i]
	}
	return x
}
