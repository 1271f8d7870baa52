package cpu

import "sync/atomic"

// The rms_norm mean, fast and still the serial chain's bits.
//
// ggml (and rmsNorm's contract) computes mean = float32(S_s/n), S_s the
// serial float64 sum of the terms t_i = float64(fl32(v_i·v_i)). That chain
// is one dependent double add per element; the lanes below sum the same
// terms in sixteen independent lanes (a different order, S_p) and then
// prove, per row, that the order cannot change the float32 mean:
//
//  1. Error bound. The t_i are exact doubles, t_i ≥ 0, multiples of 2^-149
//     and (when finite) far inside double's normal range, so every double
//     add of them rounds with relative error ≤ u = 2^-53 (no underflow).
//     Any sum of n terms evaluated as a binary tree of additions (the
//     serial chain is one, the lanes plus their reduction another; adding
//     a lane's initial +0 is exact) gives Σ t_i·Π(1+δ_k) over the ≤ n−1
//     additions above t_i, so |S_tree − S| ≤ γ_{n−1}·S with
//     γ_m = m·u/(1−m·u) and S the exact sum (Higham, Accuracy and
//     Stability of Numerical Algorithms, Lemma 3.1 and §4.2; Σ|t_i| = S
//     because the terms are non-negative). Hence
//     |S_p − S_s| ≤ 2γ_{n−1}·S ≤ 2γ_{n−1}/(1−γ_{n−1})·S_p ≤ 2.001·n·u·S_p
//     for n ≤ 2^40.
//  2. The check. E = fl(S_p·(n·2^-51)) ≥ 4·n·u·S_p·(1−u) (n·2^-51 is
//     exact), lo = fl(S_p−E) ≤ S_p − E + u·S_p and hi = fl(S_p+E) ≥
//     S_p + E − 2u·S_p (E < S_p). For n ≥ 2, E − 2u·S_p ≥ 2.001·n·u·S_p,
//     so lo ≤ S_s ≤ hi. (A row of one element has no addition: the
//     serial chain computes it, as it does rows longer than 2^40.)
//  3. Monotonicity. x ↦ float32(x/float64(n)) (double division rounded to
//     nearest, then conversion rounded to nearest even; both saturate to
//     +Inf) is non-decreasing for n > 0, so f(lo) ≤ f(S_s) ≤ f(hi): when
//     f(lo) == f(hi), that float32 is the serial chain's mean.
//
// When f(lo) ≠ f(hi) (the mean sits within E of a float32 rounding
// boundary: measured on normal rows, about 1 in 10^5 at n = 2048 and 5 in
// 10^5 at 4096, bench/results/2026-12-01-normexact), or S_p is Inf or NaN
// (lo or hi is NaN, and NaN ≠ NaN), the serial chain runs.
// The CUDA kernels (kernels/common.cuh, rms_mean) make the same check.

// sumSqLanes is the number of double lanes sumSquaresLanes sums in.
const sumSqLanes = 16

// maxLanesRow is the longest row the bound of step 1 is stated for.
const maxLanesRow = 1 << 40

// serialMeans counts the rows whose mean the serial chain computed (the
// tests' window on the rare path).
var serialMeans atomic.Int64

// meanSquares is float32(Σ float64(v·v) / len(x)) with the sum taken
// serially in x's order (ggml's rms_norm mean), computed in lanes.
func meanSquares(x []float32) float32 {
	n := len(x)
	if n > 1 && int64(n) <= maxLanesRow {
		if m, ok := meanIfDetermined(sumSquaresLanes(x), n); ok {
			return m
		}
	}
	serialMeans.Add(1)
	return meanSquaresSerial(x)
}

// meanIfDetermined returns float32(S_s/n) for every S_s within the bound of
// step 1 of S_p, and whether that is one float32 (the proof above).
func meanIfDetermined(sp float64, n int) (float32, bool) {
	fn := float64(n)
	e := float64(sp * (fn * 0x1p-51))
	lo := float32(float64(sp-e) / fn)
	hi := float32(float64(sp+e) / fn)
	return lo, lo == hi
}

// meanSquaresSerial is the serial chain itself.
func meanSquaresSerial(x []float32) float32 {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	return float32(sum / float64(len(x)))
}

// sumSquaresLanesGo is the lane order: element i of each whole chunk of
// 16 goes to lane i (lanes start at +0), the lanes are reduced as
// ((l_j + l_{4+j}) + (l_{8+j} + l_{12+j})) for j = 0..3, then
// (r_0 + r_2) + (r_1 + r_3); the elements past the last whole chunk are
// then added to that one by one. sumSquaresLanes (assembly at the AVX2
// level) is bit-identical to it.
func sumSquaresLanesGo(x []float32) float64 {
	var a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15 float64
	n16 := len(x) &^ (sumSqLanes - 1)
	for c := x[:n16]; len(c) >= sumSqLanes; c = c[sumSqLanes:] {
		a0 += float64(c[0] * c[0])
		a1 += float64(c[1] * c[1])
		a2 += float64(c[2] * c[2])
		a3 += float64(c[3] * c[3])
		a4 += float64(c[4] * c[4])
		a5 += float64(c[5] * c[5])
		a6 += float64(c[6] * c[6])
		a7 += float64(c[7] * c[7])
		a8 += float64(c[8] * c[8])
		a9 += float64(c[9] * c[9])
		a10 += float64(c[10] * c[10])
		a11 += float64(c[11] * c[11])
		a12 += float64(c[12] * c[12])
		a13 += float64(c[13] * c[13])
		a14 += float64(c[14] * c[14])
		a15 += float64(c[15] * c[15])
	}
	r0 := (a0 + a4) + (a8 + a12)
	r1 := (a1 + a5) + (a9 + a13)
	r2 := (a2 + a6) + (a10 + a14)
	r3 := (a3 + a7) + (a11 + a15)
	return sumSquaresTail((r0+r2)+(r1+r3), x[n16:])
}

// sumSquaresTail adds the squares of x to s one by one.
func sumSquaresTail(s float64, x []float32) float64 {
	for _, v := range x {
		s += float64(v * v)
	}
	return s
}

// scaleRowGo is scaleRow's Go body: out[i] = x[i]·s (at the AVX2 level in assembly; one float32
// rounding either way).
func scaleRowGo(out, x []float32, s float32) {
	out = out[:len(x)]
	for i, v := range x {
		out[i] = v * s
	}
}
