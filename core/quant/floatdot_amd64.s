//go:build !noasm

#include "textflag.h"

// AVX2 + F16C twins of the lane part of the F32, F16 and BF16 dot products
// (kernels_generic.go): 32 float32 partial sums in four 8-lane registers
// (lane k of the 32 takes elements i+k), updated in order over n32 chunks
// of 32, then folded as the generic body does. F32 multiplies and adds
// and BF16 multiply and add with two roundings (the twin's float32(a·b):
// a BF16 product can leave float32's range); F16 products are exact in
// float32, so there an FMA is the same as multiply-then-add.

// FOLD32 folds Y0..Y3 to X0 lanes t0..t3 with t_l = v_l + v_{l+4} and
// v = (Y0+Y2) + (Y1+Y3), as reduceHadd and reduceMovehl begin.
#define FOLD32 \
	VADDPS Y2, Y0, Y0; \
	VADDPS Y3, Y1, Y1; \
	VADDPS Y1, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0

#define ZERO4 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3

// func f32dotAVX2(a, b *byte, n32 int) float32
// reduceHadd of the lanes: (t0+t1) + (t2+t3).
TEXT ·f32dotAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n32+16(FP), CX
	ZERO4
f32loop:
	VMOVUPS 0(SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VMULPS 0(DI), Y4, Y4
	VMULPS 32(DI), Y5, Y5
	VMULPS 64(DI), Y6, Y6
	VMULPS 96(DI), Y7, Y7
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  f32loop
	FOLD32
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

#define F16STEP(off, acc) \
	VCVTPH2PS off(SI), Y4; \
	VCVTPH2PS off(DI), Y5; \
	VFMADD231PS Y5, Y4, acc

// func f16dotAVX2(a, b *byte, n32 int) float32
// reduceHadd of the lanes.
TEXT ·f16dotAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n32+16(FP), CX
	ZERO4
f16loop:
	F16STEP(0, Y0)
	F16STEP(16, Y1)
	F16STEP(32, Y2)
	F16STEP(48, Y3)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  f16loop
	FOLD32
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

#define BF16STEP(off, acc) \
	VPMOVZXWD off(SI), Y4; \
	VPSLLD $16, Y4, Y4; \
	VPMOVZXWD off(DI), Y5; \
	VPSLLD $16, Y5, Y5; \
	VMULPS Y5, Y4, Y4; \
	VADDPS Y4, acc, acc

// func bf16dotAVX2(a, b *byte, n32 int) float32
// reduceMovehl of the lanes: (t0+t2) + (t1+t3).
TEXT ·bf16dotAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n32+16(FP), CX
	ZERO4
bf16loop:
	BF16STEP(0, Y0)
	BF16STEP(16, Y1)
	BF16STEP(32, Y2)
	BF16STEP(48, Y3)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  bf16loop
	FOLD32
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func f16f32dotAVX2(w *byte, x *float32, n16 int) float32
// DotF16F32 (f16f32.go): sixteen lanes (Y0 = lanes 0..7, Y1 = 8..15) of
// fused multiply-adds of the widened halves and the float32 activations,
// then ReduceAdd16: (hi 8 + lo 8), (hi 4 + lo 4), (0+2) + (1+3).
TEXT ·f16f32dotAVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n16+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
f16f32loop:
	VCVTPH2PS (SI), Y2
	VCVTPH2PS 16(SI), Y3
	VFMADD231PS (DI), Y2, Y0
	VFMADD231PS 32(DI), Y3, Y1
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  f16f32loop
	VADDPS Y0, Y1, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X0, X1, X0
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// RED16(a, b, dst): ReduceAdd16 of the lanes a (0..7) and b (8..15) to the
// float32 at dst (X14, X15 clobbered).
#define RED16(a, b, dst) \
	VADDPS a, b, Y14; \
	VEXTRACTF128 $1, Y14, X15; \
	VADDPS X14, X15, X14; \
	VMOVHLPS X14, X14, X15; \
	VADDPS X15, X14, X14; \
	VMOVSHDUP X14, X15; \
	VADDSS X15, X14, X14; \
	VMOVSS X14, dst

// func f16f32dotx4AVX2(w *byte, x *float32, stride, n16 int, out *[4]float32)
// f16f32dotAVX2 for four activation rows (stride in floats) at once: the
// halves widened once, each row its own 16 lanes (Y0/Y1, Y2/Y3, Y4/Y5,
// Y6/Y7), reduced as ReduceAdd16.
TEXT ·f16f32dotx4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ n16+24(FP), CX
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
f16f32x4loop:
	VCVTPH2PS (SI), Y8
	VCVTPH2PS 16(SI), Y9
	VFMADD231PS (DI), Y8, Y0
	VFMADD231PS 32(DI), Y9, Y1
	VFMADD231PS (DI)(R8*1), Y8, Y2
	VFMADD231PS 32(DI)(R8*1), Y9, Y3
	VFMADD231PS (DI)(R8*2), Y8, Y4
	VFMADD231PS 32(DI)(R8*2), Y9, Y5
	VFMADD231PS (DI)(R9*1), Y8, Y6
	VFMADD231PS 32(DI)(R9*1), Y9, Y7
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  f16f32x4loop
	MOVQ out+32(FP), DX
	RED16(Y0, Y1, 0(DX))
	RED16(Y2, Y3, 4(DX))
	RED16(Y4, Y5, 8(DX))
	RED16(Y6, Y7, 12(DX))
	VZEROUPPER
	RET
