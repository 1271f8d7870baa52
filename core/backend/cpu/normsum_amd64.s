//go:build !noasm

#include "textflag.h"

// func sumSquaresAVX2(x *float32, n16 int) float64
// Y0..Y3 are lanes 0–3, 4–7, 8–11, 12–15 of sumSquaresLanesGo: each chunk
// of 16 floats is squared in float32 (VMULPS, one rounding), widened
// exactly (VCVTPS2PD) and added lane by lane; the reduction is the Go
// twin's, operation for operation.
TEXT ·sumSquaresAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n16+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	TESTQ CX, CX
	JZ reduce

loop:
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMULPS Y4, Y4, Y4
	VMULPS Y5, Y5, Y5
	VCVTPS2PD X4, Y6
	VEXTRACTF128 $1, Y4, X4
	VCVTPS2PD X4, Y7
	VADDPD Y6, Y0, Y0
	VADDPD Y7, Y1, Y1
	VCVTPS2PD X5, Y8
	VEXTRACTF128 $1, Y5, X5
	VCVTPS2PD X5, Y9
	VADDPD Y8, Y2, Y2
	VADDPD Y9, Y3, Y3
	ADDQ $64, SI
	DECQ CX
	JNZ loop

reduce:
	VADDPD Y1, Y0, Y0            // l_j + l_{4+j}
	VADDPD Y3, Y2, Y2            // l_{8+j} + l_{12+j}
	VADDPD Y2, Y0, Y0            // r_j
	VEXTRACTF128 $1, Y0, X1      // r_2, r_3
	VADDPD X1, X0, X0            // r_0+r_2, r_1+r_3
	VPERMILPD $1, X0, X1
	VADDSD X1, X0, X0
	VZEROUPPER
	MOVSD X0, ret+16(FP)
	RET

// func scaleAVX2(out, x *float32, n8 int, s float32)
TEXT ·scaleAVX2(SB), NOSPLIT, $0-28
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n8+16(FP), CX
	VBROADCASTSS s+24(FP), Y0
	TESTQ CX, CX
	JZ done

loop:
	VMULPS (SI), Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ loop

done:
	VZEROUPPER
	RET
