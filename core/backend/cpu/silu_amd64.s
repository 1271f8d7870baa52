//go:build !noasm

#include "textflag.h"

// SiLU and SwiGLU over whole rows of 8-lane chunks, fused: per chunk
// e = expf16(−x) (the steps of expf16x8AVX2, constants kept in registers),
// s = x / (1 + e), and for SwiGLU s·u, each step the Go body's single
// rounding, so the results are bit-identical to siluRow16 (times u).
// A chunk with a lane outside the exp's assembly range (|n| > 126 or NaN)
// stops the loop: the function returns how many chunks it wrote, and the
// caller does that chunk in Go and calls again for the rest.

#define BC(imm, y) \
	MOVL imm, AX; VMOVD AX, X0; VPBROADCASTD X0, y

// Y15 shift, Y14 log2e, Y13 abs mask, Y12 126, Y11 sign, Y10 ln2hi,
// Y9 ln2lo, Y8 one; c0..c4 and 127 are broadcast from memory each use.
#define SILU_CONSTS \
	BC($0x4b400000, Y15); \
	BC($0x3fb8aa3b, Y14); \
	BC($0x7fffffff, Y13); \
	BC($0x42fc0000, Y12); \
	BC($0x80000000, Y11); \
	BC($0x3f317200, Y10); \
	BC($0x35bfbe8e, Y9); \
	BC($0x3f800000, Y8)

DATA siluC<>+0(SB)/4, $0x3c072010  // c0
DATA siluC<>+4(SB)/4, $0x3d2b9f17  // c1
DATA siluC<>+8(SB)/4, $0x3e2aaf33  // c2
DATA siluC<>+12(SB)/4, $0x3efffedb // c3
DATA siluC<>+16(SB)/4, $0x3f7ffff6 // c4
DATA siluC<>+20(SB)/4, $127
GLOBL siluC<>(SB), RODATA|NOPTR, $24

// SILU_CHUNK: Y1 = x at (SI) → Y1 = x/(1+expf16(−x)); jumps to bad when a
// lane is out of the assembly range.
#define SILU_CHUNK(bad) \
	VMOVUPS (SI), Y1; \
	VXORPS Y11, Y1, Y2;        /* a = −x */ \
	VMOVAPS Y15, Y3; \
	VFMADD231PS Y14, Y2, Y3;   /* z = fma(a, log2e, shift) */ \
	VSUBPS Y15, Y3, Y3;        /* n */ \
	VANDPS Y13, Y3, Y4; \
	VCMPPS $2, Y12, Y4, Y4;    /* |n| <= 126 */ \
	VMOVMSKPS Y4, AX; \
	CMPL AX, $0xff; \
	JNE bad; \
	VXORPS Y11, Y3, Y5;        /* −n */ \
	VMOVAPS Y2, Y6; \
	VFMADD231PS Y10, Y5, Y6; \
	VFMADD231PS Y9, Y5, Y6;    /* b */ \
	VMULPS Y6, Y6, Y7;         /* u = b·b */ \
	VBROADCASTSS siluC<>+4(SB), Y4; \
	VBROADCASTSS siluC<>+0(SB), Y5; \
	VFMADD231PS Y5, Y6, Y4;    /* p1 = fma(c0, b, c1) */ \
	VBROADCASTSS siluC<>+12(SB), Y5; \
	VBROADCASTSS siluC<>+8(SB), Y0; \
	VFMADD231PS Y0, Y6, Y5;    /* p2 = fma(c2, b, c3) */ \
	VFMADD231PS Y7, Y4, Y5;    /* p3 = fma(p1, u, p2) */ \
	VMOVAPS Y8, Y4; \
	VBROADCASTSS siluC<>+16(SB), Y0; \
	VFMADD231PS Y0, Y6, Y4;    /* p4 = fma(c4, b, 1) */ \
	VFMADD231PS Y7, Y5, Y4;    /* j = fma(p3, u, p4) */ \
	VCVTPS2DQ Y3, Y5; \
	VPBROADCASTD siluC<>+20(SB), Y0; \
	VPADDD Y0, Y5, Y5; \
	VPSLLD $23, Y5, Y5;        /* 2^n */ \
	VMULPS Y5, Y4, Y4;         /* e = j·2^n */ \
	VADDPS Y8, Y4, Y4;         /* 1 + e */ \
	VDIVPS Y4, Y1, Y1          /* x / (1 + e) */

// func siluAVX2(out, x *float32, n8 int) int
TEXT ·siluAVX2(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n8+16(FP), CX
	SILU_CONSTS
	XORQ DX, DX
siluloop:
	SILU_CHUNK(silustop)
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	INCQ DX
	CMPQ DX, CX
	JLT  siluloop
silustop:
	MOVQ DX, ret+24(FP)
	VZEROUPPER
	RET

// func swigluAVX2(out, x, u *float32, n8 int) int
TEXT ·swigluAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ u+16(FP), BX
	MOVQ n8+24(FP), CX
	SILU_CONSTS
	XORQ DX, DX
swigluloop:
	SILU_CHUNK(swiglustop)
	VMULPS (BX), Y1, Y1        // silu·u
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, BX
	INCQ DX
	CMPQ DX, CX
	JLT  swigluloop
swiglustop:
	MOVQ DX, ret+32(FP)
	VZEROUPPER
	RET
