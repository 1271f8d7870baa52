//go:build !noasm

#include "textflag.h"

// func scatter4x8AVX(o *float32, dst *float32, stride int)
// Rows r = 0..3 of o (eight tokens each) in Y0..Y3; two rounds of unpacks
// leave token t's four results in the low lane of one register for t < 4
// and in the high lane for t + 4, each stored at dst + 4·t·stride.
TEXT ·scatter4x8AVX(SB), NOSPLIT, $0-24
	MOVQ o+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ stride+16(FP), R8
	SHLQ $2, R8 // bytes
	LEAQ (R8)(R8*2), R9 // 3·stride
	LEAQ (DI)(R8*4), R10 // token 4
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VUNPCKLPS Y1, Y0, Y4 // r0t0 r1t0 r0t1 r1t1 | t4 t5
	VUNPCKHPS Y1, Y0, Y5 // r0t2 r1t2 r0t3 r1t3 | t6 t7
	VUNPCKLPS Y3, Y2, Y6 // r2t0 r3t0 r2t1 r3t1 | t4 t5
	VUNPCKHPS Y3, Y2, Y7 // r2t2 r3t2 r2t3 r3t3 | t6 t7
	VUNPCKLPD Y6, Y4, Y0 // t0 | t4
	VUNPCKHPD Y6, Y4, Y1 // t1 | t5
	VUNPCKLPD Y7, Y5, Y2 // t2 | t6
	VUNPCKHPD Y7, Y5, Y3 // t3 | t7
	VMOVUPS X0, (DI)
	VMOVUPS X1, (DI)(R8*1)
	VMOVUPS X2, (DI)(R8*2)
	VMOVUPS X3, (DI)(R9*1)
	VEXTRACTF128 $1, Y0, (R10)
	VEXTRACTF128 $1, Y1, (R10)(R8*1)
	VEXTRACTF128 $1, Y2, (R10)(R8*2)
	VEXTRACTF128 $1, Y3, (R10)(R9*1)
	VZEROUPPER
	RET
