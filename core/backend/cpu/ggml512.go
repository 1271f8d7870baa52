package cpu

import (
	"math"

	"github.com/minfer/minfer/core/quant"
)

// The reference logits in testdata/ were computed by llama.cpp's CPU backend
// built for x86-64 with AVX-512 (AVX512F and AVX512DQ). Where that build's
// float arithmetic differs from the AVX2 build — the exp polynomial, the
// 16-lane reductions of softmax sums and of F16 dot products — the
// difference is a few ulps, but those ulps decide how an activation rounds
// when it is quantized to 8 bits next, and one flipped rounding moves a
// small model's logits by NMSE 1e-4. So the attention and SiLU kernels
// reproduce the AVX-512 build's order of operations exactly. These functions
// are the lane semantics of that build; each names the ggml routine it
// follows.

// expf16 is one lane of ggml_v_expf(__m512): the same Arm optimized-routines
// polynomial as the AVX2 expf, but the final "+1" is folded into the last
// FMA and the power of two applied with scalef, so it rounds differently.
// |n| > 192 gives 0 (n ≤ 0) or +Inf; scalef makes 126 < |n| ≤ 192 exact.
func expf16(x float32) float32 {
	const (
		shift = 0x1.8p23
		log2e = 0x1.715476p+0
		ln2hi = 0x1.62e4p-1
		ln2lo = 0x1.7f7d1cp-20
		c0    = 0x1.0e4020p-7
		c1    = 0x1.573e2ep-5
		c2    = 0x1.555e66p-3
		c3    = 0x1.fffdb6p-2
		c4    = 0x1.ffffecp-1
	)
	z := fma32(x, log2e, shift)
	n := z - shift
	if n != n {
		return n
	}
	if n > 192 {
		return float32(math.Inf(1))
	}
	if n < -192 {
		return 0
	}
	b := fma32(-n, ln2lo, fma32(-n, ln2hi, x))
	u := b * b
	j := fma32(fma32(fma32(c0, b, c1), u, fma32(c2, b, c3)), u, fma32(c4, b, 1))
	// scalef(j, n) = j·2^n rounded once (n is integral here).
	return float32(math.Ldexp(float64(j), int(n)))
}

// expfLibm is the C library's expf, which ggml's loops use for the elements
// past the last full vector (correctly rounded here; glibc's is within 0.502
// ulp, so the two agree but for rare halfway cases).
func expfLibm(x float32) float32 { return float32(math.Exp(float64(x))) }

// softmaxSum16 is ggml_vec_soft_max_f32 on AVX-512 over row[:n] (x − max
// already subtracted by the caller into row): full 16-lane blocks through
// expf16, each block's sum reduced in float32 and added in float64; the
// rest through the C library's expf, added one by one in float64. Entries
// equal to −Inf become 0. It writes the exponentials back and returns the
// sum.
func softmaxSum16(row []float32) float64 {
	var sum float64
	i := 0
	for ; i+15 < len(row); i += 16 {
		var blk [16]float32
		expf16Lanes(blk[:], row[i:i+16])
		copy(row[i:i+16], blk[:])
		sum += float64(quant.ReduceAdd16(&blk))
	}
	for ; i < len(row); i++ {
		row[i] = expfLibm(row[i])
		sum += float64(row[i])
	}
	return sum
}

// siluRow16 is ggml_vec_silu_f32 on AVX-512 over one row: x/(1+exp(−x))
// with expf16 for full 16-lane blocks, the C library's expf for the rest.
func siluRow16(out, x []float32) {
	n := len(x) &^ 15
	siluLanes(out[:n], x[:n])
	for i := n; i < len(x); i++ {
		out[i] = x[i] / (1 + expfLibm(-x[i]))
	}
}

// swigluRow16 is siluRow16 of g times u, element by element (ggml_silu
// then ggml_mul), each product rounded once more.
func swigluRow16(out, g, u []float32) {
	n := len(g) &^ 15
	swigluLanes(out[:n], g[:n], u[:n])
	for i := n; i < len(g); i++ {
		out[i] = g[i] / (1 + expfLibm(-g[i]))
		out[i] *= u[i]
	}
}

// siluLanesGo is the lane part of siluRow16 (len(x) a multiple of 8):
// x/(1+expf16(−x)) per element.
func siluLanesGo(out, x []float32) {
	for i := 0; i+7 < len(x); i += 8 {
		var e [8]float32
		for l := range e {
			e[l] = -x[i+l]
		}
		expf16Lanes(e[:], e[:])
		for l := range e {
			out[i+l] = x[i+l] / (1 + e[l])
		}
	}
}

// swigluLanesGo is siluLanesGo times u.
func swigluLanesGo(out, g, u []float32) {
	siluLanesGo(out, g)
	for i := range out {
		out[i] *= u[i]
	}
}

// dotF16Acc accumulates ggml_vec_dot_f16 on AVX-512 (GGML_F16_STEP 64,
// four 16-lane accumulators) one element at a time, for kernels that visit
// the elements in order but interleave several dot products (the attention
// over V). Elements 0..np−1 (np = n rounded down to 64) go to lane i mod 64;
// the rest are added in float64 after the reduction. Products of two
// halves are exact in float32, so the FMA in ggml and the add here agree.
type dotF16Acc struct {
	lanes [64]float32
	tail  float64
}

func (a *dotF16Acc) reset() { *a = dotF16Acc{} }

// add takes element i (of n in all) whose product is p.
func (a *dotF16Acc) add(i, np int, p float32) {
	if i < np {
		a.lanes[i&63] += p
		return
	}
	a.tail += float64(p)
}

// sum reduces like GGML_F32x16_REDUCE (acc0+=acc2, acc1+=acc3, acc0+=acc1,
// then quant.ReduceAdd16) and adds the float64 tail.
func (a *dotF16Acc) sum() float64 {
	var v [16]float32
	for l := range v {
		v[l] = (a.lanes[l] + a.lanes[32+l]) + (a.lanes[16+l] + a.lanes[48+l])
	}
	return float64(quant.ReduceAdd16(&v)) + a.tail
}

// nkvPad is llama.cpp's n_kv for a step without flash attention: the used
// cache cells rounded up to 32, at least 32. The softmax row and the V
// products run over that many entries (the masked ones contribute zeros),
// so it fixes where the 16- and 64-wide blocks end.
func nkvPad(used int) int {
	return max(32, (used+31)/32*32)
}
