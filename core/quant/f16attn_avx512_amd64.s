//go:build !noasm

#include "textflag.h"

// The AVX-512 form of f16dot64r1AVX2 for four heads (f16attn_amd64.go):
// sixteen dots (four K rows by four q rows) at a time, reduced together by
// transposing shuffles in the order REDUCE64 reduces each one.

// F16Q4_F(qo, dst): dst = the folded lanes of the K row in Z0..Z3
// (elements 0-15, 16-31, 32-47, 48-63) against the q row at qo(DI):
// each product from +0 by an FMA (f16dot64r1AVX2's ZERO8 and
// VFMADD231PS), then (a + c) + (b + d), REDUCE64's first three adds on
// its Y0..Y7 (Y0, Y1 = a; Y2, Y3 = b; Y4, Y5 = c; Y6, Y7 = d).
// Z8..Z10 clobbered.
#define F16Q4_F(qo, dst) \
	VXORPS dst, dst, dst; \
	VFMADD231PS qo+0(DI), Z0, dst; \
	VXORPS Z8, Z8, Z8; \
	VFMADD231PS qo+64(DI), Z1, Z8; \
	VXORPS Z9, Z9, Z9; \
	VFMADD231PS qo+128(DI), Z2, Z9; \
	VXORPS Z10, Z10, Z10; \
	VFMADD231PS qo+192(DI), Z3, Z10; \
	VADDPS Z9, dst, dst; \
	VADDPS Z10, Z8, Z8; \
	VADDPS Z8, dst, dst

// F16Q4_ROW(y): the K row at (SI) converted, dotted with the four q rows
// and reduced to y's quarters: quarter h holds head h's t[i] + t[i+4]
// (i < 4), t[i] = F[i] + F[i+8] of its folded lanes F (REDUCE64's
// VADDPS Y0, Y1 and 128-bit halves). Z4, Z5, Z11..Z13 clobbered.
#define F16Q4_ROW(y) \
	VCVTPH2PS 0(SI), Z0; \
	VCVTPH2PS 32(SI), Z1; \
	VCVTPH2PS 64(SI), Z2; \
	VCVTPH2PS 96(SI), Z3; \
	F16Q4_F(0, Z4); \
	F16Q4_F(256, Z5); \
	VSHUFF64X2 $0x44, Z5, Z4, Z11; \
	VSHUFF64X2 $0xEE, Z5, Z4, Z12; \
	VADDPS Z12, Z11, Z11; \
	F16Q4_F(512, Z4); \
	F16Q4_F(768, Z5); \
	VSHUFF64X2 $0x44, Z5, Z4, Z12; \
	VSHUFF64X2 $0xEE, Z5, Z4, Z13; \
	VADDPS Z13, Z12, Z12; \
	VSHUFF32X4 $0x88, Z12, Z11, y; \
	VSHUFF32X4 $0xDD, Z12, Z11, Z13; \
	VADDPS Z13, y, y; \
	ADDQ R11, SI

// func f16dot64q4AVX512(out *float32, ostride int, q *float32, k *uint16, kstride, nblk int)
// Head dimension 64, four heads (q rows 64 floats apart), 4·nblk K rows
// (kstride halves apart): out[h·ostride + j] = f16dot64AVX2(q + 64h, k row
// j, 1), the same bits: per block of four rows, each row's four dots
// folded and halved (F16Q4_ROW), then across rows w[i] = u[i] + u[i+2]
// (VUNPCKLPD/VUNPCKHPD: REDUCE64's VMOVHLPS step) and r = w[0] + w[1]
// (VSHUFPS: its VMOVSHDUP step), leaving head h's four rows in quarter h.
TEXT ·f16dot64q4AVX512(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DX
	MOVQ ostride+8(FP), R10
	SHLQ $2, R10
	LEAQ (R10)(R10*2), R12
	MOVQ q+16(FP), DI
	MOVQ k+24(FP), SI
	MOVQ kstride+32(FP), R11
	SHLQ $1, R11
	MOVQ nblk+40(FP), CX
q4blk:
	F16Q4_ROW(Z16)
	F16Q4_ROW(Z17)
	F16Q4_ROW(Z18)
	F16Q4_ROW(Z19)
	VUNPCKLPD Z17, Z16, Z20
	VUNPCKHPD Z17, Z16, Z21
	VADDPS Z21, Z20, Z20
	VUNPCKLPD Z19, Z18, Z22
	VUNPCKHPD Z19, Z18, Z23
	VADDPS Z23, Z22, Z22
	VSHUFPS $0x88, Z22, Z20, Z24
	VSHUFPS $0xDD, Z22, Z20, Z25
	VADDPS Z25, Z24, Z24
	VMOVUPS X24, (DX)
	VEXTRACTF32X4 $1, Z24, (DX)(R10*1)
	VEXTRACTF32X4 $2, Z24, (DX)(R10*2)
	VEXTRACTF32X4 $3, Z24, (DX)(R12*1)
	ADDQ $16, DX
	DECQ CX
	JNZ  q4blk
	VZEROUPPER
	RET
