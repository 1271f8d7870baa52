//go:build !noasm

#include "textflag.h"
#include "rows8_amd64.h"

// Q40_R8_DOT: a step of the AVX2 eight-row Q4_0 kernels (q4_0q8_0r8tAVX2
// and its x8 form): the 32 bytes of quants in Y1 (two rows' halves)
// against the token's low and high quants (Y11, Y12), as pairwise int32
// sums into dst.
#define Q40_R8_DOT(dst) \
	VPSRLW $4, Y1, Y2; \
	VPAND Y15, Y1, Y1; \
	VPAND Y15, Y2, Y2; \
	VPMADDUBSW Y11, Y1, Y1; \
	VPMADDUBSW Y12, Y2, Y2; \
	VPADDW Y2, Y1, Y1; \
	VPMADDWD Y13, Y1, dst

// func q4_0q8_0r8tAVX2(w *byte, wstride int, x *byte, nb int, tab *byte, out *[8]float32)
// Eight Q4_0 rows against one token (decode), with the token's table
// (PrepareToken1): rows p and p+4 share a vector, their unsigned nibbles
// against the token's quants; three VPHADDDs leave the eight rows' block
// sums in the lanes of one register, 8·Σq comes off, and each lane does
// the one-token sequence sum += sumi·(d_w·d_x): bit-identical to it.
TEXT ·q4_0q8_0r8tAVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ tab+32(FP), BX
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R9)(R8*4), R11
	LEAQ (SI)(R8*8), DX
	MOVL $0x0F0F0F0F, AX; VMOVQ AX, X15; VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX; VMOVQ AX, X13; VPBROADCASTD X13, Y13
	VXORPS Y0, Y0, Y0
q40r8tloop:
	// The caller's next eight rows (the region after these) as one
	// sequential stream: 8·18 bytes of it per block.
	PREFETCHT0 0(DX)
	PREFETCHT0 64(DX)
	PREFETCHT0 128(DX)
	VBROADCASTI128 2(DI), Y11
	VBROADCASTI128 18(DI), Y12
	VMOVDQU 2(SI), X1
	VINSERTI128 $1, 2(SI)(R8*4), Y1, Y1
	Q40_R8_DOT(Y3)
	VMOVDQU 2(SI)(R8*1), X1
	VINSERTI128 $1, 2(SI)(R10*1), Y1, Y1
	Q40_R8_DOT(Y4)
	VMOVDQU 2(SI)(R8*2), X1
	VINSERTI128 $1, 2(SI)(R9*2), Y1, Y1
	Q40_R8_DOT(Y5)
	VMOVDQU 2(SI)(R9*1), X1
	VINSERTI128 $1, 2(SI)(R11*1), Y1, Y1
	Q40_R8_DOT(Y6)
	Q40_R8_SUMS
	MOVWLZX (SI), AX
	VMOVD AX, X8
	VPINSRW $1, (SI)(R8*1), X8, X8
	VPINSRW $2, (SI)(R8*2), X8, X8
	VPINSRW $3, (SI)(R9*1), X8, X8
	VPINSRW $4, (SI)(R8*4), X8, X8
	VPINSRW $5, (SI)(R10*1), X8, X8
	VPINSRW $6, (SI)(R9*2), X8, X8
	VPINSRW $7, (SI)(R11*1), X8, X8
	VCVTPH2PS X8, Y8
	Q40_R8_ACC
	ADDQ $18, SI
	ADDQ $144, DX
	ADDQ $34, DI
	ADDQ $8, BX
	DECQ CX
	JNZ  q40r8tloop
	MOVQ out+40(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET


// func q4_0q8_0r8x8AVX2(w *byte, x *byte, nb int, tab *byte, out *[8]float32)
// The eight rows of one Q4_0 x8 group (rows8i.go) against one token with
// its table: q4_0q8_0r8tAVX2 on one sequential stream. Each 32 bytes of
// quants are a [r_p | r_p+4] register as they are, and the eight scales
// one 16-byte load; the arithmetic is q4_0q8_0r8tAVX2's, bit for bit.
TEXT ·q4_0q8_0r8x8AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ tab+24(FP), BX
	MOVL $0x0F0F0F0F, AX; VMOVQ AX, X15; VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX; VMOVQ AX, X13; VPBROADCASTD X13, Y13
	VXORPS Y0, Y0, Y0
	MOVQ ·x8PrefetchQ4_0(SB), R11 // how far ahead to prefetch (x8prefetch_amd64.go)
q40r8x8loop:
	X8_PF3
	VBROADCASTI128 2(DI), Y11
	VBROADCASTI128 18(DI), Y12
	VMOVDQU 16(SI), Y1
	Q40_R8_DOT(Y3)
	VMOVDQU 48(SI), Y1
	Q40_R8_DOT(Y4)
	VMOVDQU 80(SI), Y1
	Q40_R8_DOT(Y5)
	VMOVDQU 112(SI), Y1
	Q40_R8_DOT(Y6)
	Q40_R8_SUMS
	VCVTPH2PS (SI), Y8
	Q40_R8_ACC
	ADDQ $144, SI
	ADDQ $34, DI
	ADDQ $8, BX
	DECQ CX
	JNZ  q40r8x8loop
	MOVQ out+32(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// func deinterleave8Q4_0AVX2(dst *byte, wrb int, src *byte, nb int)
// Deinterleave8 for Q4_0: each x8 block's eight scales and eight rows'
// quants stored back to their rows (row r at dst + r·wrb), block by block.
TEXT ·deinterleave8Q4_0AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ wrb+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R9)(R8*4), R11
x8deint:
	MOVW 0(SI), AX
	MOVW AX, (DI)
	MOVW 2(SI), AX
	MOVW AX, (DI)(R8*1)
	MOVW 4(SI), AX
	MOVW AX, (DI)(R8*2)
	MOVW 6(SI), AX
	MOVW AX, (DI)(R9*1)
	MOVW 8(SI), AX
	MOVW AX, (DI)(R8*4)
	MOVW 10(SI), AX
	MOVW AX, (DI)(R10*1)
	MOVW 12(SI), AX
	MOVW AX, (DI)(R9*2)
	MOVW 14(SI), AX
	MOVW AX, (DI)(R11*1)
	VMOVDQU 16(SI), X0
	VMOVDQU 32(SI), X1
	VMOVDQU 48(SI), X2
	VMOVDQU 64(SI), X3
	VMOVDQU 80(SI), X4
	VMOVDQU 96(SI), X5
	VMOVDQU 112(SI), X6
	VMOVDQU 128(SI), X7
	VMOVDQU X0, 2(DI)
	VMOVDQU X1, 2(DI)(R8*4)
	VMOVDQU X2, 2(DI)(R8*1)
	VMOVDQU X3, 2(DI)(R10*1)
	VMOVDQU X4, 2(DI)(R8*2)
	VMOVDQU X5, 2(DI)(R9*2)
	VMOVDQU X6, 2(DI)(R9*1)
	VMOVDQU X7, 2(DI)(R11*1)
	ADDQ $144, SI
	ADDQ $18, DI
	DECQ CX
	JNZ  x8deint
	RET

// DEINT8_Q8_0_ROW stores one row of an x8 Q8_0 block back: its scale
// (at soff in the block, to sdst) and its four 8-byte chunks (at qoff,
// qoff+64, qoff+128, qoff+192) gathered into one 32-byte store (to qdst).
#define DEINT8_Q8_0_ROW(soff, qoff, sdst, qdst) \
	MOVW soff(SI), AX; \
	MOVW AX, sdst; \
	VMOVQ qoff(SI), X0; \
	VPINSRQ $1, qoff+64(SI), X0, X0; \
	VMOVQ qoff+128(SI), X1; \
	VPINSRQ $1, qoff+192(SI), X1, X1; \
	VINSERTI128 $1, X1, Y0, Y0; \
	VMOVDQU Y0, qdst

// func deinterleave8Q8_0AVX2(dst *byte, wrb int, src *byte, nb int)
// Deinterleave8 for Q8_0: per x8 block, each row's eight scale bytes and
// its four 8-byte chunks (16+64c+8r) gathered into one 32-byte register
// (VMOVQ, VPINSRQ, VINSERTI128) and stored back to the row (row r at
// dst + r·wrb), block by block.
TEXT ·deinterleave8Q8_0AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ wrb+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R9)(R8*4), R11
x8deint80:
	DEINT8_Q8_0_ROW(0, 16, (DI), 2(DI))
	DEINT8_Q8_0_ROW(2, 24, (DI)(R8*1), 2(DI)(R8*1))
	DEINT8_Q8_0_ROW(4, 32, (DI)(R8*2), 2(DI)(R8*2))
	DEINT8_Q8_0_ROW(6, 40, (DI)(R9*1), 2(DI)(R9*1))
	DEINT8_Q8_0_ROW(8, 48, (DI)(R8*4), 2(DI)(R8*4))
	DEINT8_Q8_0_ROW(10, 56, (DI)(R10*1), 2(DI)(R10*1))
	DEINT8_Q8_0_ROW(12, 64, (DI)(R9*2), 2(DI)(R9*2))
	DEINT8_Q8_0_ROW(14, 72, (DI)(R11*1), 2(DI)(R11*1))
	ADDQ $272, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  x8deint80
	VZEROUPPER
	RET

// func q8_0q8_0r8x8AVX2(w *byte, x *byte, nb int, tab *byte, out *[8]float32)
// The eight rows of one Q8_0 x8 group (rows8i.go) against one token: per
// 8-byte chunk, rows 0..3 and 4..7 in two registers against the chunk of
// the token's quants in every 64-bit lane, the sign trick (|w| against
// sign(w)·q: pairs of at most 128·127, no int16 saturation) and VPMADDWD
// into each row's two int32 lanes; VPHADDD and VPERMQ leave the rows' block
// sums in order, and each lane does the one-row sequence sum =
// fma(sumi, d_w·d_x, sum): bit-identical to it. The table is not read.
// Each block prefetches the five lines x8PrefetchQ8_0 bytes ahead.
TEXT ·q8_0q8_0r8x8AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVL $0x00010001, AX; VMOVQ AX, X13; VPBROADCASTD X13, Y13
	VXORPS Y0, Y0, Y0
	MOVQ ·x8PrefetchQ8_0(SB), R11 // how far ahead to prefetch (x8prefetch_amd64.go)
q80r8x8loop:
	X8_PF5
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPBROADCASTQ 2(DI), Y11
	VMOVDQU 16(SI), Y1
	VPSIGNB Y1, Y11, Y2
	VPABSB Y1, Y1
	VPMADDUBSW Y2, Y1, Y1
	VPMADDWD Y13, Y1, Y1
	VPADDD Y1, Y5, Y5
	VMOVDQU 48(SI), Y3
	VPSIGNB Y3, Y11, Y4
	VPABSB Y3, Y3
	VPMADDUBSW Y4, Y3, Y3
	VPMADDWD Y13, Y3, Y3
	VPADDD Y3, Y6, Y6
	VPBROADCASTQ 10(DI), Y11
	VMOVDQU 80(SI), Y1
	VPSIGNB Y1, Y11, Y2
	VPABSB Y1, Y1
	VPMADDUBSW Y2, Y1, Y1
	VPMADDWD Y13, Y1, Y1
	VPADDD Y1, Y5, Y5
	VMOVDQU 112(SI), Y3
	VPSIGNB Y3, Y11, Y4
	VPABSB Y3, Y3
	VPMADDUBSW Y4, Y3, Y3
	VPMADDWD Y13, Y3, Y3
	VPADDD Y3, Y6, Y6
	VPBROADCASTQ 18(DI), Y11
	VMOVDQU 144(SI), Y1
	VPSIGNB Y1, Y11, Y2
	VPABSB Y1, Y1
	VPMADDUBSW Y2, Y1, Y1
	VPMADDWD Y13, Y1, Y1
	VPADDD Y1, Y5, Y5
	VMOVDQU 176(SI), Y3
	VPSIGNB Y3, Y11, Y4
	VPABSB Y3, Y3
	VPMADDUBSW Y4, Y3, Y3
	VPMADDWD Y13, Y3, Y3
	VPADDD Y3, Y6, Y6
	VPBROADCASTQ 26(DI), Y11
	VMOVDQU 208(SI), Y1
	VPSIGNB Y1, Y11, Y2
	VPABSB Y1, Y1
	VPMADDUBSW Y2, Y1, Y1
	VPMADDWD Y13, Y1, Y1
	VPADDD Y1, Y5, Y5
	VMOVDQU 240(SI), Y3
	VPSIGNB Y3, Y11, Y4
	VPABSB Y3, Y3
	VPMADDUBSW Y4, Y3, Y3
	VPMADDWD Y13, Y3, Y3
	VPADDD Y3, Y6, Y6
	// Y5 = [r0 r0 r1 r1 | r2 r2 r3 r3], Y6 the same of rows 4..7:
	// [r0 r1 r4 r5 | r2 r3 r6 r7], then the qwords in row order.
	VPHADDD Y6, Y5, Y5
	VPERMQ $0xD8, Y5, Y5
	VCVTDQ2PS Y5, Y5
	VCVTPH2PS (SI), Y8
	VPBROADCASTW (DI), X4
	VCVTPH2PS X4, Y4
	VMULPS Y4, Y8, Y8
	VFMADD231PS Y8, Y5, Y0
	ADDQ $272, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q80r8x8loop
	MOVQ out+32(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET
