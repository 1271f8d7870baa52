//go:build !noasm

#include "textflag.h"

// Q6_K rows against eight-token Q8_K tiles, AVX2 (layouts and arithmetic:
// tile8q6k.go). The weights are prepared once per row quad as signed bytes
// q6−32, the tile holds the activations as unsigned bytes x+128, so one
// VPMADDUBSW per row, chunk and tile multiplies a broadcast weight chunk
// with the eight tokens' chunks. Two chunks' pair sums add up in int16
// (|sum| ≤ 4·32·255 = 32640), one VPMADDWD by the sub-block's scale widens
// them to int32; at the end of a super-block the row's constant C is
// taken off, and sum += (d·d_x)·float32(isum) in the lanes, unfused, as the
// one-token kernel: bit-identical.

// ---------------------------------------------------------------------
// Four rows against one tile.
// ---------------------------------------------------------------------

// T6_FIRST: Y8..Y11 = pair sums of rows 0..3 against tile chunk toff
// (weight bytes woff of the sub-block's 32 per row).
#define T6_FIRST(toff, woff) \
	VMOVDQU toff(DI), Y12; \
	VPBROADCASTD woff(BX), Y13; \
	VPMADDUBSW Y13, Y12, Y8; \
	VPBROADCASTD woff+32(BX), Y13; \
	VPMADDUBSW Y13, Y12, Y9; \
	VPBROADCASTD woff+64(BX), Y13; \
	VPMADDUBSW Y13, Y12, Y10; \
	VPBROADCASTD woff+96(BX), Y13; \
	VPMADDUBSW Y13, Y12, Y11

// T6_NEXT: Y8..Y11 += the pair sums of the next chunk (int16, exact).
#define T6_NEXT(toff, woff) \
	VMOVDQU toff(DI), Y12; \
	VPBROADCASTD woff(BX), Y13; \
	VPMADDUBSW Y13, Y12, Y14; \
	VPADDW Y14, Y8, Y8; \
	VPBROADCASTD woff+32(BX), Y13; \
	VPMADDUBSW Y13, Y12, Y14; \
	VPADDW Y14, Y9, Y9; \
	VPBROADCASTD woff+64(BX), Y13; \
	VPMADDUBSW Y13, Y12, Y14; \
	VPADDW Y14, Y10, Y10; \
	VPBROADCASTD woff+96(BX), Y13; \
	VPMADDUBSW Y13, Y12, Y14; \
	VPADDW Y14, Y11, Y11

// T6_SCALE: Y4..Y7 += each row's scale (int16 pair at soff(R10), rows
// 64 bytes apart) times its int16 sums in Y8..Y11.
#define T6_SCALE(soff) \
	VPBROADCASTD soff(R10), Y13; \
	VPMADDWD Y13, Y8, Y8; \
	VPADDD Y8, Y4, Y4; \
	VPBROADCASTD soff+64(R10), Y13; \
	VPMADDWD Y13, Y9, Y9; \
	VPADDD Y9, Y5, Y5; \
	VPBROADCASTD soff+128(R10), Y13; \
	VPMADDWD Y13, Y10, Y10; \
	VPADDD Y10, Y6, Y6; \
	VPBROADCASTD soff+192(R10), Y13; \
	VPMADDWD Y13, Y11, Y11; \
	VPADDD Y11, Y7, Y7

// T6_FIN: a row's super-block into its running sums: isum = acc − C (C at
// coff(p)), then sum += (d·d_x)·float32(isum) per token (d at doff(p),
// the tokens' d_x at (tile)).
#define T6_FIN(acc, sum, coff, doff, p, tile) \
	VPBROADCASTD coff(p), Y13; \
	VPSUBD Y13, acc, acc; \
	VCVTDQ2PS acc, acc; \
	VBROADCASTSS doff(p), Y13; \
	VMULPS tile, Y13, Y13; \
	VMULPS acc, Y13, Y13; \
	VADDPS Y13, sum, sum

// func q6_Kq8_Kr4x8AVX2(u, tile *byte, nb int, out *[32]float32)
// Four Q6_K rows prepared by prep4Q6_K against an eight-token tile.
// Registers: Y0..Y3 the rows' sums, Y4..Y7 their int32 sums of the
// super-block, Y8..Y11 their int16 sums of two chunks, Y12 a tile chunk,
// Y13 a broadcast, Y14 a product. BX walks the prepared values, DI the
// tile's chunks, R10 the scales (a sub-block of 32 at a time); R11 and
// R12 are the super-block's prepared rows and tile.
TEXT ·q6_Kq8_Kr4x8AVX2(SB), NOSPLIT, $0-32
	MOVQ u+0(FP), R11
	MOVQ tile+8(FP), R12
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q6kr4x8sb:
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	MOVQ R11, BX
	MOVQ R12, DI
	LEAQ 1024(R11), R10
	MOVQ $8, DX

q6kr4x8sub:
	// Sub-block of 32 elements: chunks 0..3 are the first sub-block of
	// 16 (scale at 0(R10)), chunks 4..7 the second (at 4(R10)).
	T6_FIRST(32, 0)
	T6_NEXT(64, 4)
	T6_SCALE(0)
	T6_FIRST(96, 8)
	T6_NEXT(128, 12)
	T6_SCALE(0)
	T6_FIRST(160, 16)
	T6_NEXT(192, 20)
	T6_SCALE(4)
	T6_FIRST(224, 24)
	T6_NEXT(256, 28)
	T6_SCALE(4)
	ADDQ $128, BX
	ADDQ $256, DI
	ADDQ $8, R10
	DECQ DX
	JNZ  q6kr4x8sub

	T6_FIN(Y4, Y0, 1296, 1280, R11, (R12))
	T6_FIN(Y5, Y1, 1300, 1284, R11, (R12))
	T6_FIN(Y6, Y2, 1304, 1288, R11, (R12))
	T6_FIN(Y7, Y3, 1308, 1292, R11, (R12))
	ADDQ $1312, R11
	ADDQ $2080, R12
	DECQ CX
	JNZ  q6kr4x8sb

	MOVQ out+24(FP), DX
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// Two rows against two tiles.
// ---------------------------------------------------------------------

// P6_FIRST: Y8, Y9 = row 0's pair sums against tiles a, b; Y10, Y11 row
// 1's (rows 32 bytes apart at BX; tile chunks at toff(DI), toff(DX)).
#define P6_FIRST(toff, woff) \
	VMOVDQU toff(DI), Y12; \
	VMOVDQU toff(DX), Y13; \
	VPBROADCASTD woff(BX), Y14; \
	VPMADDUBSW Y14, Y12, Y8; \
	VPMADDUBSW Y14, Y13, Y9; \
	VPBROADCASTD woff+32(BX), Y14; \
	VPMADDUBSW Y14, Y12, Y10; \
	VPMADDUBSW Y14, Y13, Y11

// P6_NEXT: Y8..Y11 += the next chunk's pair sums.
#define P6_NEXT(toff, woff) \
	VMOVDQU toff(DI), Y12; \
	VMOVDQU toff(DX), Y13; \
	VPBROADCASTD woff(BX), Y14; \
	VPMADDUBSW Y14, Y12, Y15; \
	VPADDW Y15, Y8, Y8; \
	VPMADDUBSW Y14, Y13, Y15; \
	VPADDW Y15, Y9, Y9; \
	VPBROADCASTD woff+32(BX), Y14; \
	VPMADDUBSW Y14, Y12, Y15; \
	VPADDW Y15, Y10, Y10; \
	VPMADDUBSW Y14, Y13, Y15; \
	VPADDW Y15, Y11, Y11

// P6_SCALE: Y4..Y7 += the rows' scales times Y8..Y11.
#define P6_SCALE(soff) \
	VPBROADCASTD soff(R10), Y14; \
	VPMADDWD Y14, Y8, Y8; \
	VPADDD Y8, Y4, Y4; \
	VPMADDWD Y14, Y9, Y9; \
	VPADDD Y9, Y5, Y5; \
	VPBROADCASTD soff+64(R10), Y14; \
	VPMADDWD Y14, Y10, Y10; \
	VPADDD Y10, Y6, Y6; \
	VPMADDWD Y14, Y11, Y11; \
	VPADDD Y11, Y7, Y7

// func q6_Kq8_Kr2x16AVX2(u *byte, r0 int, ta, tb *byte, nb int, out *float32)
// Rows r0 and r0+1 of four Q6_K rows prepared by prep4Q6_K against two
// eight-token tiles: each broadcast weight chunk serves sixteen tokens.
// Arithmetic as q6_Kq8_Kr4x8AVX2; row r0+i's results for ta go to
// out[8i:8i+8], for tb to out[32+8i:32+8i+8]. Registers: Y0, Y1 row 0's
// sums for ta, tb; Y2, Y3 row 1's; Y4..Y7 the matching int32 sums, Y8..Y11
// the int16 ones. Per super-block R11: the rows' values (u+32·r0), R13:
// their d and C (u+4·r0), SI: their scales (u+64·r0); R12, R14 the
// tiles'. BX, DI, DX and R10 walk values, tiles and scales.
TEXT ·q6_Kq8_Kr2x16AVX2(SB), NOSPLIT, $0-48
	MOVQ u+0(FP), R11
	MOVQ r0+8(FP), AX
	MOVQ ta+16(FP), R12
	MOVQ tb+24(FP), R14
	MOVQ nb+32(FP), CX
	LEAQ (R11)(AX*4), R13
	MOVQ AX, R8
	SHLQ $6, R8
	LEAQ (R11)(R8*1), SI
	SHLQ $5, AX
	ADDQ AX, R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q6kr2x16sb:
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	MOVQ R11, BX
	MOVQ R12, DI
	MOVQ R14, DX
	LEAQ 1024(SI), R10
	MOVQ $8, R9

q6kr2x16sub:
	P6_FIRST(32, 0)
	P6_NEXT(64, 4)
	P6_SCALE(0)
	P6_FIRST(96, 8)
	P6_NEXT(128, 12)
	P6_SCALE(0)
	P6_FIRST(160, 16)
	P6_NEXT(192, 20)
	P6_SCALE(4)
	P6_FIRST(224, 24)
	P6_NEXT(256, 28)
	P6_SCALE(4)
	ADDQ $128, BX
	ADDQ $256, DI
	ADDQ $256, DX
	ADDQ $8, R10
	DECQ R9
	JNZ  q6kr2x16sub

	T6_FIN(Y4, Y0, 1296, 1280, R13, (R12))
	T6_FIN(Y5, Y1, 1296, 1280, R13, (R14))
	T6_FIN(Y6, Y2, 1300, 1284, R13, (R12))
	T6_FIN(Y7, Y3, 1300, 1284, R13, (R14))
	ADDQ $1312, R11
	ADDQ $1312, R13
	ADDQ $1312, SI
	ADDQ $2080, R12
	ADDQ $2080, R14
	DECQ CX
	JNZ  q6kr2x16sb

	MOVQ out+40(FP), DX
	VMOVUPS Y0, (DX)
	VMOVUPS Y2, 32(DX)
	VMOVUPS Y1, 128(DX)
	VMOVUPS Y3, 160(DX)
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// Preparation of four rows.
// ---------------------------------------------------------------------

// P6_Q1..P6_Q4 build group g (elements 32g..32g+31 of a half) as
// unsigned 6-bit values in Y4 from ql[l] (Y1), ql[l+32] (Y2) and qh (Y3):
// a nibble of ql and two bits of qh moved to bits 4..5 (word shifts; the
// 0x30 mask in Y14 drops what crossed a byte).
#define P6_Q1 \
	VPAND Y15, Y1, Y4; \
	VPSLLW $4, Y3, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y4, Y4

#define P6_Q2 \
	VPAND Y15, Y2, Y4; \
	VPSLLW $2, Y3, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y4, Y4

#define P6_Q3 \
	VPSRLW $4, Y1, Y4; \
	VPAND Y15, Y4, Y4; \
	VPAND Y14, Y3, Y5; \
	VPOR Y5, Y4, Y4

#define P6_Q4 \
	VPSRLW $4, Y2, Y4; \
	VPAND Y15, Y4, Y4; \
	VPSRLW $2, Y3, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y4, Y4

// P6_STORE: the group in Y4 as q6−32 to qo(DI); Y11 += its two sub-blocks'
// scales (int16 pairs at so(DI), so+4(DI)) times their sums of w (pair
// sums against bytes of 1 in Y12).
#define P6_STORE(qo, so) \
	VPSUBB Y13, Y4, Y4; \
	VMOVDQU Y4, qo(DI); \
	VPMADDUBSW Y4, Y12, Y5; \
	VPBROADCASTD so(DI), X6; \
	VPBROADCASTD so+4(DI), X7; \
	VINSERTI128 $1, X7, Y6, Y6; \
	VPMADDWD Y6, Y5, Y5; \
	VPADDD Y5, Y11, Y11

// P6_HALF: the four groups of a half (ql at qlo, qh at qho of the row's
// super-block at R13); values of group g to qo+128·g, scales from so.
#define P6_HALF(qlo, qho, qo, so) \
	VMOVDQU qlo(R13), Y1; \
	VMOVDQU qlo+32(R13), Y2; \
	VMOVDQU qho(R13), Y3; \
	P6_Q1; \
	P6_STORE(qo, so); \
	P6_Q2; \
	P6_STORE(qo+128, so+8); \
	P6_Q3; \
	P6_STORE(qo+256, so+16); \
	P6_Q4; \
	P6_STORE(qo+384, so+24)

// P6_ROW prepares row r's super-block at R13: d to doff, the scales as
// int16 pairs to so..so+63 (VPUNPCK doubles each word within a lane; the
// VPERM2I128s put sub-blocks 0..7 first, 8..15 second), its values, and
// C = 128·Σ sc·Σw to coff.
#define P6_ROW(qo, so, doff, coff) \
	MOVWLZX 208(R13), AX; \
	VMOVD AX, X0; \
	VCVTPH2PS X0, X0; \
	VMOVSS X0, doff(DI); \
	VPMOVSXBW 192(R13), Y5; \
	VPUNPCKLWD Y5, Y5, Y6; \
	VPUNPCKHWD Y5, Y5, Y7; \
	VPERM2I128 $0x20, Y7, Y6, Y8; \
	VPERM2I128 $0x31, Y7, Y6, Y9; \
	VMOVDQU Y8, so(DI); \
	VMOVDQU Y9, so+32(DI); \
	VPXOR Y11, Y11, Y11; \
	P6_HALF(0, 128, qo, so); \
	P6_HALF(64, 160, qo+512, so+32); \
	VEXTRACTI128 $1, Y11, X5; \
	VPADDD X5, X11, X11; \
	VPSHUFD $0x4E, X11, X5; \
	VPADDD X5, X11, X11; \
	VPSHUFD $0xB1, X11, X5; \
	VPADDD X5, X11, X11; \
	VMOVD X11, AX; \
	SHLL $7, AX; \
	MOVL AX, coff(DI)

// func prep4Q6_KAVX2asm(w *byte, wstride, adv, nb int, u *byte)
// prep4Q6_KGeneric's layout (tile8q6k.go) for four Q6_K rows, row r's
// super-block b at w + r·wstride + b·adv (the file layout: adv = 210; a
// half K x8 group, rows8k.go: wstride = 210, adv = 840). Constants:
// Y15 0x0F, Y14 0x30, Y13 0x20 (the bias 32), Y12 0x01 bytes.
TEXT ·prep4Q6_KAVX2asm(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ adv+16(FP), R14
	MOVQ nb+24(FP), CX
	MOVQ u+32(FP), DI
	LEAQ (R8)(R8*2), R9
	MOVL $0x0F0F0F0F, AX; VMOVD AX, X15; VPBROADCASTD X15, Y15
	MOVL $0x30303030, AX; VMOVD AX, X14; VPBROADCASTD X14, Y14
	MOVL $0x20202020, AX; VMOVD AX, X13; VPBROADCASTD X13, Y13
	MOVL $0x01010101, AX; VMOVD AX, X12; VPBROADCASTD X12, Y12

prep6kloop:
	LEAQ (SI), R13
	P6_ROW(0, 1024, 1280, 1296)
	LEAQ (SI)(R8*1), R13
	P6_ROW(32, 1088, 1284, 1300)
	LEAQ (SI)(R8*2), R13
	P6_ROW(64, 1152, 1288, 1304)
	LEAQ (SI)(R9*1), R13
	P6_ROW(96, 1216, 1292, 1308)
	ADDQ R14, SI
	ADDQ $1312, DI
	DECQ CX
	JNZ  prep6kloop
	VZEROUPPER
	RET
