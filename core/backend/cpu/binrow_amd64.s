//go:build !noasm

#include "textflag.h"

// func addAVX2(out, x, y *float32, n8 int)
// out[i] = x[i] + y[i] over n8 chunks of 8.
TEXT ·addAVX2(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n8+24(FP), CX
	TESTQ CX, CX
	JZ addDone

addLoop:
	VMOVUPS (SI), Y0
	VADDPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ addLoop

addDone:
	VZEROUPPER
	RET

// func mulAVX2(out, x, y *float32, n8 int)
// out[i] = x[i]·y[i] over n8 chunks of 8.
TEXT ·mulAVX2(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n8+24(FP), CX
	TESTQ CX, CX
	JZ mulDone

mulLoop:
	VMOVUPS (SI), Y0
	VMULPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ mulLoop

mulDone:
	VZEROUPPER
	RET
