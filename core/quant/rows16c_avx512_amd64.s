//go:build !noasm

#include "textflag.h"

// C16Q40_ARGS: both kernels' arguments into their registers (w SI, x DI,
// nb CX, tab BX, the prefetch distance R11) and the nibble mask (Z15);
// C16Q40_OUT: the sixteen sums to out.
#define C16Q40_ARGS \
	MOVQ w+0(FP), SI; \
	MOVQ x+8(FP), DI; \
	MOVQ nb+16(FP), CX; \
	MOVQ tab+24(FP), BX; \
	MOVQ ·c16PrefetchQ4_0(SB), R11; \
	MOVL $0x0F0F0F0F, AX; \
	VPBROADCASTD AX, Z15
#define C16Q40_OUT \
	MOVQ out+32(FP), DX; \
	VMOVUPS Z0, (DX); \
	VZEROUPPER

// C16Q40_HI_SHIFT, C16Q40_HI_GFNI: a 64-byte chunk's high nibbles (Z1) into
// Z2 — shifted right by four and masked, or by one VGF2P8AFFINEQB (GFNI:
// the bit matrix in Z13, 0x1020408000000000, shifts each byte right by
// four, zero filled).
#define C16Q40_HI_SHIFT VPSRLW $4, Z1, Z2; VPANDD Z15, Z2, Z2
#define C16Q40_HI_GFNI VGF2P8AFFINEQB $0, Z13, Z1, Z2

// C16Q40_CHUNK: chunk off of the group's block (every row's quant bytes
// 4c..4c+3): its low nibbles meet the token's quants at xlo, its high ones
// (HI) those at xhi, into the lanes' int32 sums (Z4).
#define C16Q40_CHUNK(off, xlo, xhi, HI) \
	VMOVDQU64 off(SI), Z1; \
	HI; \
	VPANDD Z15, Z1, Z1; \
	VPDPBUSD.BCST xlo(DI), Z1, Z4; \
	VPDPBUSD.BCST xhi(DI), Z2, Z4

// C16Q40_BLOCK: one block of the group (the loop body of the kernels):
// prefetch (C16Q40_PF), then C16Q40_BODY.
#define C16Q40_BLOCK(HI) \
	C16Q40_PF; \
	C16Q40_BODY(HI)

// C16Q40_PF: the block's five lines c16PrefetchQ4_0 (R11) bytes ahead.
#define C16Q40_PF \
	PREFETCHT0 (SI)(R11*1); \
	PREFETCHT0 64(SI)(R11*1); \
	PREFETCHT0 128(SI)(R11*1); \
	PREFETCHT0 192(SI)(R11*1); \
	PREFETCHT0 256(SI)(R11*1)

// C16Q40_BODY: the lanes from −8·Σq, four chunks, then sum +=
// float(sumi)·(d_w·d_x) and the pointers to the next block.
#define C16Q40_BODY(HI) \
	VPBROADCASTD 4(BX), Z4; \
	VPSUBD Z4, Z14, Z4; \
	C16Q40_CHUNK(32, 2, 18, HI); \
	C16Q40_CHUNK(96, 6, 22, HI); \
	C16Q40_CHUNK(160, 10, 26, HI); \
	C16Q40_CHUNK(224, 14, 30, HI); \
	VCVTDQ2PS Z4, Z4; \
	VCVTPH2PS (SI), Z5; \
	VBROADCASTSS (BX), Z6; \
	VMULPS Z6, Z5, Z5; \
	VMULPS Z5, Z4, Z4; \
	VADDPS Z4, Z0, Z0; \
	ADDQ $288, SI; \
	ADDQ $34, DI; \
	ADDQ $8, BX

// C16X4_ARGS: the four-group kernels' arguments (groups at SI, R8, R9, R10; x DI, nb CX, tab BX,
// the prefetch distance R11) and constants, the sums Z16..Z19 zeroed.
#define C16X4_ARGS \
	MOVQ w+0(FP), SI; \
	MOVQ stride+8(FP), AX; \
	MOVQ x+16(FP), DI; \
	MOVQ nb+24(FP), CX; \
	MOVQ tab+32(FP), BX; \
	MOVQ ·c16PrefetchQ4_0(SB), R11; \
	LEAQ (SI)(AX*1), R8; \
	LEAQ (R8)(AX*1), R9; \
	LEAQ (R9)(AX*1), R10; \
	MOVL $0x0F0F0F0F, AX; \
	VPBROADCASTD AX, Z15; \
	MOVQ $0x1020408000000000, AX; \
	VPBROADCASTQ AX, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19

// C16X4_STEP: the four groups, the token's block and the table one block on, CX counted down.
#define C16X4_STEP \
	ADDQ $288, SI; \
	ADDQ $288, R8; \
	ADDQ $288, R9; \
	ADDQ $288, R10; \
	ADDQ $34, DI; \
	ADDQ $8, BX; \
	DECQ CX

// C16X4_OUT: the four groups' sums to out.
#define C16X4_OUT \
	MOVQ out+40(FP), DX; \
	VMOVUPS Z16, (DX); \
	VMOVUPS Z17, 64(DX); \
	VMOVUPS Z18, 128(DX); \
	VMOVUPS Z19, 192(DX); \
	VZEROUPPER

// func q4_0q8_0r16c16AVX512(w *byte, x *byte, nb int, tab *byte, out *[16]float32)
// The sixteen rows of one Q4_0 col16 group (rows16c.go) against one Q8_0
// token with its table (tab: per block d_x as float32, then 8·Σq as int32),
// row r in int32/float32 lane r. Per block: the lanes start at −8·Σq; each
// 64-byte chunk c (every row's quant bytes 4c..4c+3) gives its low nibbles
// (elements 4c..4c+3) and high nibbles (16+4c..16+4c+3), which meet the
// token's matching four quants broadcast by VPDPBUSD; the lane's int32 is
// then the row's exact block sum, and sum += float(sumi)·(d_w·d_x), the
// generic twin's float sequence. The stream is prefetched
// c16PrefetchQ4_0 bytes ahead.
TEXT ·q4_0q8_0r16c16AVX512(SB), NOSPLIT, $0-40
	C16Q40_ARGS
	VPXORD Z0, Z0, Z0
	VPXORD Z14, Z14, Z14
c16q40loop:
	C16Q40_BLOCK(C16Q40_HI_SHIFT)
	DECQ CX
	JNZ  c16q40loop
	C16Q40_OUT
	RET

// func q4_0q8_0r16c16GFNI(w *byte, x *byte, nb int, tab *byte, out *[16]float32)
// q4_0q8_0r16c16AVX512 with each chunk's high nibbles taken by one
// VGF2P8AFFINEQB (C16Q40_HI_GFNI) instead of VPSRLW and VPANDD: the same
// bytes into the same VPDPBUSDs, four instructions fewer a block.
TEXT ·q4_0q8_0r16c16GFNI(SB), NOSPLIT, $0-40
	C16Q40_ARGS
	MOVQ $0x1020408000000000, AX
	VPBROADCASTQ AX, Z13
	VPXORD Z0, Z0, Z0
	VPXORD Z14, Z14, Z14
c16q40gloop:
	C16Q40_BLOCK(C16Q40_HI_GFNI)
	DECQ CX
	JNZ  c16q40gloop
	C16Q40_OUT
	RET

// func q4_0q8_0r16c16GFNINoPF(w *byte, x *byte, nb int, tab *byte, out *[16]float32)
// q4_0q8_0r16c16GFNI without the software prefetch (c16Q4_0Prefetch): the
// same instructions on the same bytes, less the five PREFETCHT0 a block.
TEXT ·q4_0q8_0r16c16GFNINoPF(SB), NOSPLIT, $0-40
	C16Q40_ARGS
	MOVQ $0x1020408000000000, AX
	VPBROADCASTQ AX, Z13
	VPXORD Z0, Z0, Z0
	VPXORD Z14, Z14, Z14
c16q40nloop:
	C16Q40_BODY(C16Q40_HI_GFNI)
	DECQ CX
	JNZ  c16q40nloop
	C16Q40_OUT
	RET

// c16PrepQ4 is the dword gather of prep4x16Q4_0SAVX512: output row r's
// eight dwords are the low-nibble dwords 4k+r (k = 0..3: its quant bytes
// 4k..4k+3) of the first table, then the high-nibble ones (16+4k+r).
DATA c16PrepQ4<>+0(SB)/4, $0
DATA c16PrepQ4<>+4(SB)/4, $4
DATA c16PrepQ4<>+8(SB)/4, $8
DATA c16PrepQ4<>+12(SB)/4, $12
DATA c16PrepQ4<>+16(SB)/4, $16
DATA c16PrepQ4<>+20(SB)/4, $20
DATA c16PrepQ4<>+24(SB)/4, $24
DATA c16PrepQ4<>+28(SB)/4, $28
DATA c16PrepQ4<>+32(SB)/4, $1
DATA c16PrepQ4<>+36(SB)/4, $5
DATA c16PrepQ4<>+40(SB)/4, $9
DATA c16PrepQ4<>+44(SB)/4, $13
DATA c16PrepQ4<>+48(SB)/4, $17
DATA c16PrepQ4<>+52(SB)/4, $21
DATA c16PrepQ4<>+56(SB)/4, $25
DATA c16PrepQ4<>+60(SB)/4, $29
DATA c16PrepQ4<>+64(SB)/4, $2
DATA c16PrepQ4<>+68(SB)/4, $6
DATA c16PrepQ4<>+72(SB)/4, $10
DATA c16PrepQ4<>+76(SB)/4, $14
DATA c16PrepQ4<>+80(SB)/4, $18
DATA c16PrepQ4<>+84(SB)/4, $22
DATA c16PrepQ4<>+88(SB)/4, $26
DATA c16PrepQ4<>+92(SB)/4, $30
DATA c16PrepQ4<>+96(SB)/4, $3
DATA c16PrepQ4<>+100(SB)/4, $7
DATA c16PrepQ4<>+104(SB)/4, $11
DATA c16PrepQ4<>+108(SB)/4, $15
DATA c16PrepQ4<>+112(SB)/4, $19
DATA c16PrepQ4<>+116(SB)/4, $23
DATA c16PrepQ4<>+120(SB)/4, $27
DATA c16PrepQ4<>+124(SB)/4, $31
GLOBL c16PrepQ4<>(SB), RODATA|NOPTR, $128

// func prep4x16Q4_0SAVX512(q *byte, s *byte, u *byte, nb int)
// unpack4Q4_0S's preparation (nb 128-byte blocks of nibbles as bytes, row
// r's 32 at 32r in element order, then a tail of 16 bytes a block: the
// four d_w as float32) of rows 4q..4q+3 of a Q4_0 col16 group (rows16c.go)
// as it lies: q is the quad's bytes of chunk 0 in the first block
// (group + 32 + 16q; chunk c 64c bytes on), s its first scale
// (group + 8q); blocks 288 bytes apart. The four chunks' 16 bytes fill the
// four 128-bit lanes of one register (dword 4c+r: row r's bytes 4c..4c+3);
// the low and high nibbles are gathered into rows by two VPERMI2Ds.
TEXT ·prep4x16Q4_0SAVX512(SB), NOSPLIT, $0-32
	MOVQ q+0(FP), SI
	MOVQ s+8(FP), R10
	MOVQ u+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ CX, R11
	SHLQ $7, R11
	ADDQ DI, R11 // the scales' tail
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z15
	VMOVDQU64 c16PrepQ4<>+0(SB), Z13
	VMOVDQU64 c16PrepQ4<>+64(SB), Z14
p4x16q40loop:
	VMOVDQU (SI), X0
	VINSERTI32X4 $1, 64(SI), Z0, Z0
	VINSERTI32X4 $2, 128(SI), Z0, Z0
	VINSERTI32X4 $3, 192(SI), Z0, Z0
	VPANDD Z15, Z0, Z1
	VPSRLW $4, Z0, Z2
	VPANDD Z15, Z2, Z2
	VMOVDQA64 Z13, Z3
	VPERMI2D Z2, Z1, Z3
	VMOVDQA64 Z14, Z4
	VPERMI2D Z2, Z1, Z4
	VMOVDQU64 Z3, (DI)
	VMOVDQU64 Z4, 64(DI)
	VMOVQ (R10), X5
	VCVTPH2PS X5, X5
	VMOVUPS X5, (R11)
	ADDQ $288, SI
	ADDQ $288, R10
	ADDQ $128, DI
	ADDQ $16, R11
	DECQ CX
	JNZ  p4x16q40loop
	VZEROUPPER
	RET

// Deinterleave of col16 groups (Kernel.Deinterleave): per block, each
// four chunks c..c+3 (dword r of chunk c: row r's quant bytes 4c..4c+3)
// are transposed 4×4 within each 128-bit lane, so that lane l of the
// k-th result holds row 4l+k's sixteen bytes 4c..4c+15, stored at off
// into the row's block. Row pointers: DI (row 0), R11 (row 4), R12
// (row 8), R13 (row 12); R8 = wrb, R10 = 3·wrb.
#define C16_T4(o0, o1, o2, o3, off) \
	VMOVDQU64 o0(SI), Z0; \
	VMOVDQU64 o1(SI), Z1; \
	VMOVDQU64 o2(SI), Z2; \
	VMOVDQU64 o3(SI), Z3; \
	VPUNPCKLDQ Z1, Z0, Z4; \
	VPUNPCKHDQ Z1, Z0, Z5; \
	VPUNPCKLDQ Z3, Z2, Z6; \
	VPUNPCKHDQ Z3, Z2, Z7; \
	VPUNPCKLQDQ Z6, Z4, Z0; \
	VPUNPCKHQDQ Z6, Z4, Z1; \
	VPUNPCKLQDQ Z7, Z5, Z2; \
	VPUNPCKHQDQ Z7, Z5, Z3; \
	VMOVDQU X0, off(DI); \
	VEXTRACTI32X4 $1, Z0, off(R11); \
	VEXTRACTI32X4 $2, Z0, off(R12); \
	VEXTRACTI32X4 $3, Z0, off(R13); \
	VMOVDQU X1, off(DI)(R8*1); \
	VEXTRACTI32X4 $1, Z1, off(R11)(R8*1); \
	VEXTRACTI32X4 $2, Z1, off(R12)(R8*1); \
	VEXTRACTI32X4 $3, Z1, off(R13)(R8*1); \
	VMOVDQU X2, off(DI)(R8*2); \
	VEXTRACTI32X4 $1, Z2, off(R11)(R8*2); \
	VEXTRACTI32X4 $2, Z2, off(R12)(R8*2); \
	VEXTRACTI32X4 $3, Z2, off(R13)(R8*2); \
	VMOVDQU X3, off(DI)(R10*1); \
	VEXTRACTI32X4 $1, Z3, off(R11)(R10*1); \
	VEXTRACTI32X4 $2, Z3, off(R12)(R10*1); \
	VEXTRACTI32X4 $3, Z3, off(R13)(R10*1)

// C16_S4 moves the scales of rows base..base+3 (P their row pointer) to
// the start of their blocks.
#define C16_S4(base, P) \
	MOVWLZX (2*base)(SI), AX; \
	MOVW AX, (P); \
	MOVWLZX (2*base+2)(SI), AX; \
	MOVW AX, (P)(R8*1); \
	MOVWLZX (2*base+4)(SI), AX; \
	MOVW AX, (P)(R8*2); \
	MOVWLZX (2*base+6)(SI), AX; \
	MOVW AX, (P)(R10*1)

// func deinterleave16Q4_0AVX512(dst *byte, wrb int, src *byte, nb int)
// Sixteen Q4_0 rows (wrb apart in dst) from the col16 group src.
TEXT ·deinterleave16Q4_0AVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ wrb+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R10 // 3·wrb
	LEAQ (DI)(R8*4), R11 // row 4
	LEAQ (R11)(R8*4), R12 // row 8
	LEAQ (R12)(R8*4), R13 // row 12
d16q40loop:
	C16_S4(0, DI)
	C16_S4(4, R11)
	C16_S4(8, R12)
	C16_S4(12, R13)
	C16_T4(32, 96, 160, 224, 2)
	ADDQ $288, SI
	ADDQ $18, DI
	ADDQ $18, R11
	ADDQ $18, R12
	ADDQ $18, R13
	DECQ CX
	JNZ  d16q40loop
	VZEROUPPER
	RET

// C16X4_CHUNK: C16Q40_CHUNK (GFNI high nibbles) of the group at P.
#define C16X4_CHUNK(P, off, xlo, xhi) \
	VMOVDQU64 off(P), Z1; \
	VGF2P8AFFINEQB $0, Z13, Z1, Z2; \
	VPANDD Z15, Z1, Z1; \
	VPDPBUSD.BCST xlo(DI), Z1, Z4; \
	VPDPBUSD.BCST xhi(DI), Z2, Z4

// C16X4_BLOCK: C16Q40_BLOCK(C16Q40_HI_GFNI) of the group at P into the
// sums ACC, the pointers left as they are: C16X4_PF, then C16X4_BODY.
#define C16X4_BLOCK(P, ACC) \
	C16X4_PF(P); \
	C16X4_BODY(P, ACC)

#define C16X4_PF(P) \
	PREFETCHT0 (P)(R11*1); \
	PREFETCHT0 64(P)(R11*1); \
	PREFETCHT0 128(P)(R11*1); \
	PREFETCHT0 192(P)(R11*1); \
	PREFETCHT0 256(P)(R11*1)

#define C16X4_BODY(P, ACC) \
	VPBROADCASTD 4(BX), Z4; \
	VPSUBD Z4, Z14, Z4; \
	C16X4_CHUNK(P, 32, 2, 18); \
	C16X4_CHUNK(P, 96, 6, 22); \
	C16X4_CHUNK(P, 160, 10, 26); \
	C16X4_CHUNK(P, 224, 14, 30); \
	VCVTDQ2PS Z4, Z4; \
	VCVTPH2PS (P), Z5; \
	VBROADCASTSS (BX), Z6; \
	VMULPS Z6, Z5, Z5; \
	VMULPS Z5, Z4, Z4; \
	VADDPS Z4, ACC, ACC

// func q4_0q8_0r16c16x4GFNI(w *byte, stride int, x *byte, nb int, tab *byte, out *[64]float32)
// q4_0q8_0r16c16GFNI on four col16 groups at once (group g at w +
// g·stride, its sixteen sums at out[16g:]): block by block, the four
// groups' blocks one after another against the token's block. Each
// group's sums get the one-group kernel's float sequence, so the bits are
// the same; the token's block is read from L1 for all four (one group of
// a long row, e.g. ffn_down's 50.7 KB, alone pushes the token's lines out
// of L1 before the next group reads them), and each thread streams four
// regions at once.
TEXT ·q4_0q8_0r16c16x4GFNI(SB), NOSPLIT, $0-48
	C16X4_ARGS
c16x4loop:
	C16X4_BLOCK(SI, Z16)
	C16X4_BLOCK(R8, Z17)
	C16X4_BLOCK(R9, Z18)
	C16X4_BLOCK(R10, Z19)
	C16X4_STEP
	JNZ  c16x4loop
	C16X4_OUT
	RET

// func q4_0q8_0r16c16x4GFNINoPF(w *byte, stride int, x *byte, nb int, tab *byte, out *[64]float32)
// q4_0q8_0r16c16x4GFNI without the software prefetch (c16Q4_0Prefetch).
TEXT ·q4_0q8_0r16c16x4GFNINoPF(SB), NOSPLIT, $0-48
	C16X4_ARGS
c16x4nloop:
	C16X4_BODY(SI, Z16)
	C16X4_BODY(R8, Z17)
	C16X4_BODY(R9, Z18)
	C16X4_BODY(R10, Z19)
	C16X4_STEP
	JNZ  c16x4nloop
	C16X4_OUT
	RET
