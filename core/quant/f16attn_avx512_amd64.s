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

// ZROW(off, t, acc): acc += cvt(16 halves at off(R12)(CX*2))·w (Z15),
// LROW's multiply then add, sixteen columns.
#define ZROW(off, t, acc) \
	VCVTPH2PS off(R12)(CX*2), t; \
	VMULPS Z15, t, t; \
	VADDPS acc, t, acc

// func f16lanes64axpyAVX512(lanes *float32, d int, w *float32, v *uint16, vstride, nrows, n64 int)
// f16lanes64axpyAVX2 for the columns c < 64·n64 in groups of 64 (four
// ZMM sums a group): for each lane l < 64, lanes[l·d + c..c+63] = Σ
// w[j]·v[j·vstride + c..c+63] over the rows j ≡ l (mod 64), j < nrows,
// in j order from +0, each product rounded and then added as there,
// skipping the weights whose bits are 0x80000000 (−0).
TEXT ·f16lanes64axpyAVX512(SB), NOSPLIT, $0-56
	MOVQ lanes+0(FP), DI
	MOVQ d+8(FP), R8
	SHLQ $2, R8            // lane row stride in bytes
	MOVQ w+16(FP), DX
	MOVQ v+24(FP), SI
	MOVQ vstride+32(FP), R9
	SHLQ $1, R9            // V row stride in bytes
	MOVQ nrows+40(FP), R10
	MOVQ n64+48(FP), R11
	SHLQ $6, R11           // columns done here
	MOVQ R9, R13
	SHLQ $6, R13           // 64 rows: the next row of the same lane
	XORQ BX, BX            // l
zlanesl:
	XORQ CX, CX            // column
zlanes64:
	CMPQ CX, R11
	JGE  zlanesnext
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	MOVQ BX, AX            // j
	MOVQ SI, R12           // row j of v
zlanesrow:
	CMPQ AX, R10
	JGE  zlanesstore
	CMPL (DX)(AX*4), $-2147483648
	JEQ  zlanesskip
	VBROADCASTSS (DX)(AX*4), Z15
	ZROW(0, Z8, Z0)
	ZROW(32, Z9, Z1)
	ZROW(64, Z10, Z2)
	ZROW(96, Z11, Z3)
zlanesskip:
	ADDQ $64, AX
	ADDQ R13, R12
	JMP  zlanesrow
zlanesstore:
	VMOVUPS Z0, 0(DI)(CX*4)
	VMOVUPS Z1, 64(DI)(CX*4)
	VMOVUPS Z2, 128(DI)(CX*4)
	VMOVUPS Z3, 192(DI)(CX*4)
	ADDQ $64, CX
	JMP  zlanes64
zlanesnext:
	ADDQ R8, DI
	ADDQ R9, SI
	INCQ BX
	CMPQ BX, $64
	JLT  zlanesl
	VZEROUPPER
	RET

// ZROWS4(w, a0, a1, a2, a3, skip): for one head whose weight row starts at
// w, unless w[j] (AX) is −0: the four column groups Z16..Z19 (row j's
// halves, converted once) times w[j], each product rounded and then added
// to a0..a3 as ZROW does.
#define ZROWS4(w, a0, a1, a2, a3, skip) \
	CMPL (w)(AX*4), $-2147483648; \
	JEQ  skip; \
	VBROADCASTSS (w)(AX*4), Z20; \
	VMULPS Z20, Z16, Z21; \
	VADDPS Z21, a0, a0; \
	VMULPS Z20, Z17, Z22; \
	VADDPS Z22, a1, a1; \
	VMULPS Z20, Z18, Z23; \
	VADDPS Z23, a2, a2; \
	VMULPS Z20, Z19, Z24; \
	VADDPS Z24, a3, a3; \
skip:

// func f16lanes64x4axpyAVX512(lanes *float32, w *float32, wstride int, v *uint16, vstride, nrows int)
// f16lanes64axpyAVX512 at head dimension 64 (n64 = 1) for four heads of
// one V: head g's lanes at lanes + g·64·64 floats, its weights at w +
// g·wstride; each V row is converted once (Z16..Z19) and added to the four
// heads' sums (Z0..Z15, four a head) with its own weight, in the one-head
// kernel's operations and order per head.
TEXT ·f16lanes64x4axpyAVX512(SB), NOSPLIT, $0-48
	MOVQ lanes+0(FP), DI
	MOVQ w+8(FP), DX
	MOVQ wstride+16(FP), R8
	SHLQ $2, R8            // weight row stride in bytes
	LEAQ (DX)(R8*1), CX    // head 1's weights
	LEAQ (CX)(R8*1), R11   // head 2's
	LEAQ (R11)(R8*1), R8   // head 3's
	MOVQ v+24(FP), SI
	MOVQ vstride+32(FP), R9
	SHLQ $1, R9            // V row stride in bytes
	MOVQ nrows+40(FP), R10
	MOVQ R9, R13
	SHLQ $6, R13           // 64 rows: the next row of the same lane
	XORQ BX, BX            // l
z4lane:
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	VXORPS Z8, Z8, Z8
	VXORPS Z9, Z9, Z9
	VXORPS Z10, Z10, Z10
	VXORPS Z11, Z11, Z11
	VXORPS Z12, Z12, Z12
	VXORPS Z13, Z13, Z13
	VXORPS Z14, Z14, Z14
	VXORPS Z15, Z15, Z15
	MOVQ BX, AX            // j
	MOVQ SI, R12           // row j of v
z4row:
	CMPQ AX, R10
	JGE  z4store
	VCVTPH2PS 0(R12), Z16
	VCVTPH2PS 32(R12), Z17
	VCVTPH2PS 64(R12), Z18
	VCVTPH2PS 96(R12), Z19
	ZROWS4(DX, Z0, Z1, Z2, Z3, z4skip0)
	ZROWS4(CX, Z4, Z5, Z6, Z7, z4skip1)
	ZROWS4(R11, Z8, Z9, Z10, Z11, z4skip2)
	ZROWS4(R8, Z12, Z13, Z14, Z15, z4skip3)
	ADDQ $64, AX
	ADDQ R13, R12
	JMP  z4row
z4store:
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VMOVUPS Z4, 16384(DI)
	VMOVUPS Z5, 16448(DI)
	VMOVUPS Z6, 16512(DI)
	VMOVUPS Z7, 16576(DI)
	VMOVUPS Z8, 32768(DI)
	VMOVUPS Z9, 32832(DI)
	VMOVUPS Z10, 32896(DI)
	VMOVUPS Z11, 32960(DI)
	VMOVUPS Z12, 49152(DI)
	VMOVUPS Z13, 49216(DI)
	VMOVUPS Z14, 49280(DI)
	VMOVUPS Z15, 49344(DI)
	ADDQ $256, DI          // the next lane's row (64 floats)
	ADDQ R9, SI
	INCQ BX
	CMPQ BX, $64
	JLT  z4lane
	VZEROUPPER
	RET
