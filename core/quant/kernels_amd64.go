//go:build !noasm

package quant

import "golang.org/x/sys/cpu"

// The AVX2 level: assembly in kernels_amd64.s, chosen at run time (so a
// GOAMD64=v1 binary uses it on a CPU that has it). The adapters of
// kernels_asm.go turn whole rows into block counts; an empty row returns
// what the generic body does.

func init() {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !cpu.X86.HasF16C {
		return
	}
	register(AVX2, avx2Kernels())
}

// avx2Kernels is the AVX2 level's kernel set (a fresh copy).
func avx2Kernels() *kernelSet {
	ks := *genericKernels()
	ks.dotQ4_0Q8_0 = blocks(q4_0q8_0AVX2, bytesQ4, bytesQ80)
	ks.dotQ8_0Q8_0 = blocks(q8_0q8_0AVX2, bytesQ80, bytesQ80)
	ks.dot4Q4_0Q8_0 = blocks4(q4_0q8_0x4AVX2, bytesQ4, bytesQ80)
	ks.dot4Q8_0Q8_0 = blocks4(q8_0q8_0x4AVX2, bytesQ80, bytesQ80)
	ks.dotR4Q4_0Q8_0 = blocksR4(q4_0q8_0r4AVX2, bytesQ4, bytesQ80)
	ks.dot4TQ4_0Q8_0 = dot4TQ4_0Q8_0AVX2
	ks.dotR4TQ4_0Q8_0 = dotR4TQ4_0Q8_0AVX2
	ks.dotR4Q8_0Q8_0 = blocksR4(q8_0q8_0r4AVX2, bytesQ80, bytesQ80)
	ks.dotR4x8Q4_0Q8_0 = dotR4x8Q4_0Q8_0AVX2
	ks.dotR4x8Q8_0Q8_0 = dotR4x8Q8_0Q8_0AVX2
	ks.unpack4Q4_0 = unpack4Q4_0AVX2
	ks.tile8Q8_0Abs = true
	ks.scan4Q8_0 = scan4Q8_0AVX2
	ks.scatter4x8 = scatter4x8AVX2
	ks.pack8Q8_0 = packTile8(packTile8Q8_0AVX2, tile8Block)
	ks.pack8Q8_0Abs = packTile8(packTile8Q8_0AbsAVX2, tile8AbsBlock)
	ks.dotR4x8Q8_0Q8_0Abs = dotR4x8Q8_0Q8_0AbsAVX2
	ks.dotR2x16Q8_0Q8_0Abs = dotR2x16Q8_0Q8_0AbsAVX2
	ks.dotR4x16Q8_0Q8_0Abs = dotR4x16Q8_0Q8_0AbsAVX2
	ks.dotR4x8Q4_KQ8_K = dotR4x8Q4_KQ8_KAVX2
	ks.dotR8TQ4_0Q8_0 = rows8TQ4_0(q4_0q8_0r8tAVX2)
	ks.dotR8X8Q4_0Q8_0 = rows8X8(q4_0q8_0r8x8AVX2, bytesQ4x8)
	ks.deinterleave8Q4_0 = deinterleave8(deinterleave8Q4_0AVX2, bytesQ4, bytesQ4x8)
	ks.dotR8X8Q8_0Q8_0 = rows8X8(q8_0q8_0r8x8AVX2, bytesQ80x8)
	ks.deinterleave8Q8_0 = deinterleave8(deinterleave8Q8_0AVX2, bytesQ80, bytesQ80x8)
	ks.dotR4Q4_KQ8_K = blocksR4(q4_Kq8_Kr4AVX2, bytesQ4K, bytesQ8K)
	ks.dotR2x16Q8_0Q8_0 = pairQ8_0(q8_0q8_0r2x16AVX2)
	ks.dotR2x16Q4_0Q8_0 = pairQ4_0(q4_0q8_0r2x16AVX2)
	ks.dotR4x16Q4_0Q8_0 = quadPrep(q4_0q8_0r4x16AVX2, prep4Q4_0, bytesQ4)
	ks.dotR2x16Q4_KQ8_K = pairQ4_K(q4_Kq8_Kr2x16AVX2)
	ks.dotR4x16Q4_KQ8_K = quadK(q4_Kq8_Kr4x16AVX2, tile8KBlock, prep4Q4_KBlock)
	ks.dotR4Q6_KQ8_K = blocksR4(q6_Kq8_Kr4AVX2, bytesQ6K, bytesQ8K)
	ks.dotR4x4Q4_KQ8_K = blocksR4x4(q4_Kq8_Kr4x4AVX2, bytesQ4K, bytesQ8K)
	ks.dotR4x4Q6_KQ8_K = blocksR4x4(q6_Kq8_Kr4x4AVX2, bytesQ6K, bytesQ8K)
	ks.prep4Q4_K = prep4Q4_KAVX2
	ks.prep4x8Q4_K = prep4x8Q4_KAVX2
	ks.dotR4x8Q6_KQ8_K = dotR4x8Q6_KQ8_KAVX2
	ks.dotR2x16Q6_KQ8_K = dotR2x16Q6_KQ8_KAVX2
	ks.prep4Q6_K = prep4Q6_KAVX2
	ks.prep4x8Q6_K = prep4x8Q6_KAVX2
	ks.dotQ4_KQ8_K = blocks(q4_Kq8_KAVX2, bytesQ4K, bytesQ8K)
	ks.dot4Q4_KQ8_K = blocks4(q4_Kq8_Kx4AVX2, bytesQ4K, bytesQ8K)
	ks.dotQ6_KQ8_K = blocks(q6_Kq8_KAVX2, bytesQ6K, bytesQ8K)
	ks.dot4Q6_KQ8_K = blocks4(q6_Kq8_Kx4AVX2, bytesQ6K, bytesQ8K)
	ks.axpyF16 = axpyF16AVX2
	ks.f16Lanes64 = f16Lanes64AVX2
	ks.quantizeQ8_0 = quantizer(quantQ8_0AVX2, qk, bytesQ80)
	ks.token1Q8_0 = token1Q8_0AVX2x
	ks.quantizeQ8_K = quantizer(quantQ8_KAVX2, qkK, bytesQ8K)
	addBreadthAVX2(&ks)
	return &ks
}

//go:noescape
func q4_0q8_0AVX2(w, x *byte, nb int) float32

//go:noescape
func q4_0q8_0x4AVX2(w, x *byte, stride, nb int, out *[4]float32)

//go:noescape
func q8_0q8_0AVX2(w, x *byte, nb int) float32

//go:noescape
func q8_0q8_0x4AVX2(w, x *byte, stride, nb int, out *[4]float32)

//go:noescape
func q4_Kq8_KAVX2(w, x *byte, nb int) float32

//go:noescape
func q4_Kq8_Kx4AVX2(w, x *byte, stride, nb int, out *[4]float32)

//go:noescape
func q6_Kq8_KAVX2(w, x *byte, nb int) float32

//go:noescape
func q6_Kq8_Kx4AVX2(w, x *byte, stride, nb int, out *[4]float32)

//go:noescape
func quantQ8_0AVX2(src *float32, dst *byte, nb int)

//go:noescape
func quantQ8_KAVX2(src *float32, dst *byte, nb int)

//go:noescape
func axpyf16AVX2(acc *float32, a float32, v *uint16, n8 int)

//go:noescape
func f16lanes64AVX2(q *float32, k *uint16, n64 int, out *[16]float32)

func axpyF16AVX2(acc []float32, a float32, v []uint16) {
	n8 := len(acc) &^ 7
	v = v[:len(acc)]
	if n8 > 0 {
		axpyf16AVX2(&acc[0], a, &v[0], n8/8)
	}
	for i := n8; i < len(acc); i++ {
		acc[i] += a * F16ToF32(v[i])
	}
}

func f16Lanes64AVX2(q []float32, k []uint16, out *[16]float32) {
	if len(k) < 64 {
		*out = [16]float32{}
		return
	}
	_ = q[len(k)-1]
	f16lanes64AVX2(&q[0], &k[0], len(k)/64, out)
}

//go:noescape
func q4_0q8_0r4AVX2(w *byte, wstride int, x *byte, nb int, out *[4]float32)

//go:noescape
func q8_0q8_0r4AVX2(w *byte, wstride int, x *byte, nb int, out *[4]float32)

//go:noescape
func q4_0q8_0x4tAVX2(w, x *byte, stride, nb int, tab *byte, out *[4]float32)

func dot4TQ4_0Q8_0AVX2(w, x []byte, stride int, tab []byte, out *[4]float32) {
	nb := len(w) / bytesQ4
	if nb == 0 {
		*out = [4]float32{}
		return
	}
	_ = x[3*stride+nb*bytesQ80-1]
	_ = tab[nb*group4Q8_0-1]
	q4_0q8_0x4tAVX2(&w[0], &x[0], stride, nb, &tab[0], out)
}

//go:noescape
func q4_0q8_0r4tAVX2(w *byte, wstride int, x *byte, nb int, tab *byte, out *[4]float32)

func dotR4TQ4_0Q8_0AVX2(w []byte, wstride int, x, tab []byte, out *[4]float32) {
	nb := (len(w) - 3*wstride) / bytesQ4
	if nb <= 0 {
		*out = [4]float32{}
		return
	}
	_ = x[nb*bytesQ80-1]
	_ = tab[nb*token1Q8_0-1]
	q4_0q8_0r4tAVX2(&w[0], wstride, &x[0], nb, &tab[0], out)
}
