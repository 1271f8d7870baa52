package quant

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactFMA32 rounds a·b+c once to float32 with big.Float (ties to even).
func exactFMA32(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(200).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(200).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

func TestFMA32RoundsOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	check := func(a, b, c float32) {
		t.Helper()
		if got, want := FMA32(a, b, c), exactFMA32(a, b, c); got != want && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
			t.Fatalf("FMA32(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
	for i := 0; i < 200000; i++ {
		check(float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64()))
	}
	// Cancellation: c removes most of a·b.
	for i := 0; i < 100000; i++ {
		a := float32(r.NormFloat64())
		b := float32(r.NormFloat64())
		check(a, b, -float32(float64(a)*float64(b)))
	}
	// Double rounding: a·b + c = 2^24 + 1 ± 2^-46 rounds to the float64
	// 2^24 + 1, a float32 midpoint; rounded once the sign of 2^-46 decides.
	one := float32(1)
	eps := float32(math.Ldexp(1, -23))
	check(one+eps, -(one - eps), 1<<24+2) // exact 2^24+1+2^-46 → 2^24+2
	check(one+eps, one-eps, 1<<24)        // exact 2^24+1−2^-46 → 2^24
	for k := 0; k < 64; k++ {
		s := float32(math.Ldexp(1, k-32))
		check((one+eps)*s, -(one-eps)*s, (1<<24+2)*s*s)
	}
}
