//go:build !noasm

#include "textflag.h"

// BINROW is the body of addAVX2 and mulAVX2: out[i] = x[i] op y[i] over
// n8 chunks of 8 (op VADDPS or VMULPS), labels prefixed by name.
#define BINROW(op, loop, done) \
	MOVQ out+0(FP), DI; \
	MOVQ x+8(FP), SI; \
	MOVQ y+16(FP), DX; \
	MOVQ n8+24(FP), CX; \
	TESTQ CX, CX; \
	JZ done; \
loop: \
	VMOVUPS (SI), Y0; \
	op (DX), Y0, Y0; \
	VMOVUPS Y0, (DI); \
	ADDQ $32, SI; \
	ADDQ $32, DX; \
	ADDQ $32, DI; \
	DECQ CX; \
	JNZ loop; \
done: \
	VZEROUPPER; \
	RET

// func addAVX2(out, x, y *float32, n8 int)
TEXT ·addAVX2(SB), NOSPLIT, $0-32
	BINROW(VADDPS, addLoop, addDone)

// func mulAVX2(out, x, y *float32, n8 int)
TEXT ·mulAVX2(SB), NOSPLIT, $0-32
	BINROW(VMULPS, mulLoop, mulDone)
