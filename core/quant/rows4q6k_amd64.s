//go:build !noasm

#include "textflag.h"
#include "rows4_amd64.h"

// Four Q6_K rows against one token (decode), AVX2. Per super-block each
// row's integer sum is q6_Kq8_KAVX2's (unsigned 6-bit values against the
// signed quants, scale per sub-block of 16, minus 32·Σ scale·bsum: exact
// int32); the four rows' lanes are reduced together by VPHADDDs and the
// float epilogue runs in the lanes of one XMM register, lane r doing row
// r's scalar sequence sum += (d·d_x)·float32(isum): bit-identical to the
// one-row kernels.

// q6kShuf: VPSHUFB masks that spread one scale word over a lane: mask g
// (32 bytes at 32·g) fills the low lane with word 2g and the high lane
// with word 2g+1 of the same lane's eight (group g of a half uses scale
// 2g for its first 16 elements, 2g+1 for the second 16).
DATA q6kShuf<>+0(SB)/8, $0x0100010001000100
DATA q6kShuf<>+8(SB)/8, $0x0100010001000100
DATA q6kShuf<>+16(SB)/8, $0x0302030203020302
DATA q6kShuf<>+24(SB)/8, $0x0302030203020302
DATA q6kShuf<>+32(SB)/8, $0x0504050405040504
DATA q6kShuf<>+40(SB)/8, $0x0504050405040504
DATA q6kShuf<>+48(SB)/8, $0x0706070607060706
DATA q6kShuf<>+56(SB)/8, $0x0706070607060706
DATA q6kShuf<>+64(SB)/8, $0x0908090809080908
DATA q6kShuf<>+72(SB)/8, $0x0908090809080908
DATA q6kShuf<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q6kShuf<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q6kShuf<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q6kShuf<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q6kShuf<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q6kShuf<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL q6kShuf<>(SB), RODATA|NOPTR, $128

// R6_Q1..R6_Q4 build group g of a half as unsigned 6-bit values in Y4 from
// ql[l] (Y8), ql[l+32] (Y9) and qh (Y10), as q6_Kq8_KAVX2 does: a nibble
// of ql, two bits of qh moved to bits 4..5 (Y15 0x0F, Y14 0x30 bytes).
#define R6_Q1 \
	VPAND Y15, Y8, Y4; \
	VPSLLW $4, Y10, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y4, Y4

#define R6_Q2 \
	VPAND Y15, Y9, Y4; \
	VPSLLW $2, Y10, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y4, Y4

#define R6_Q3 \
	VPSRLW $4, Y8, Y4; \
	VPAND Y15, Y4, Y4; \
	VPAND Y14, Y10, Y5; \
	VPOR Y5, Y4, Y4

#define R6_Q4 \
	VPSRLW $4, Y9, Y4; \
	VPAND Y15, Y4, Y4; \
	VPSRLW $2, Y10, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y4, Y4

// R6_GROUP: acc += the group's values (Y4) times the token's 32 quants at
// yo(DI), pair sums widened by the group's two scales (mask mo picks them
// from the half's scale words in Y11).
#define R6_GROUP(yo, mo, acc) \
	VPSHUFB q6kShuf<>+mo(SB), Y11, Y12; \
	VPMADDUBSW yo(DI), Y4, Y6; \
	VPMADDWD Y12, Y6, Y6; \
	VPADDD Y6, acc, acc

// R6_HALF: one half of the row's super-block at R13 (ql at qlo, qh at
// qho; the token's quants from yo); perm puts the half's eight scale
// words (of Y7) into both lanes of Y11.
#define R6_HALF(qlo, qho, yo, perm, acc) \
	VMOVDQU qlo(R13), Y8; \
	VMOVDQU qlo+32(R13), Y9; \
	VMOVDQU qho(R13), Y10; \
	VPERMQ $perm, Y7, Y11; \
	R6_Q1; \
	R6_GROUP(yo, 0, acc); \
	R6_Q2; \
	R6_GROUP(yo+32, 32, acc); \
	R6_Q3; \
	R6_GROUP(yo+64, 64, acc); \
	R6_Q4; \
	R6_GROUP(yo+96, 96, acc)

// R6_ROW: row super-block at rowaddr into acc (int32 lanes). The scales
// as int16 go to Y7; acc starts at −32·Σ scale·bsum.
#define R6_ROW(rowaddr, acc) \
	LEAQ rowaddr, R13; \
	VPMOVSXBW 192(R13), Y7; \
	VPMADDWD 260(DI), Y7, Y6; \
	VPSLLD $5, Y6, Y6; \
	VPXOR acc, acc, acc; \
	VPSUBD Y6, acc, acc; \
	R6_HALF(0, 128, 4, 0x44, acc); \
	R6_HALF(64, 160, 132, 0xEE, acc)

// func q6_Kq8_Kr4sAVX2(w *byte, wstride int, x *byte, nb int, out *[4]float32, adv, pf int)
// Row r's super-block b at w + r·wstride + b·adv (the file layout: adv =
// 210; a half K x8 group, rows8k.go: wstride = 210, adv = 840), the
// prefetch stream from w + pf on (the file layout: pf = 4·wstride).
// Registers: Y0..Y3 the rows' int32 sums of the super-block, X13 the four
// running sums, Y14 0x30 and Y15 0x0F bytes; R9 = 3·wstride.
//
// Prefetch: a mat-vec calls this for rows i..i+3, then i+4..i+7, …, the
// rows adjacent. Per super-block the kernel prefetches the next 840 bytes
// of the region after its rows (R12), so the next call's rows arrive as
// one sequential stream while this call computes. Prefetching each row's
// own super-block four rows further on (four interleaved streams) or the
// one-row kernel's in-row distance measured slower from memory on the
// 2-core Zen 3 VM: 8.5–14 and 2–3 GB/s against 15–19 GB/s for one thread
// (BenchmarkMatVecDRAM, then named BenchmarkQ6KMatVec;
// bench/results/2026-12-01-cpuq6).
TEXT ·q6_Kq8_Kr4sAVX2(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	MOVQ adv+40(FP), R14
	MOVQ pf+48(FP), R12
	ADDQ SI, R12
	MOVL $0x0F0F0F0F, AX; VMOVD AX, X15; VPBROADCASTD X15, Y15
	MOVL $0x30303030, AX; VMOVD AX, X14; VPBROADCASTD X14, Y14
	VXORPS X13, X13, X13

q6kr4loop:
	// Prefetch the next call's rows (the 4·210 bytes after these rows per
	// super-block of them) as one sequential stream.
	PREFETCH_Q6K4(R12)
	ADDQ $840, R12
	R6_ROW((SI), Y0)
	R6_ROW((SI)(R8*1), Y1)
	R6_ROW((SI)(R8*2), Y2)
	R6_ROW((SI)(R9*1), Y3)
	// Lane r of X0 = row r's isum.
	HSUM4(Y0, Y1, Y2, Y3, X0, X1)
	VCVTDQ2PS X0, X0
	// The rows' d in lanes 0..3, times d_x, times isum, into the sums.
	F16X4(208, X8)
	VBROADCASTSS (DI), X10
	VMULPS X10, X8, X8
	VMULPS X0, X8, X8
	VADDPS X8, X13, X13
	ADDQ R14, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q6kr4loop

	MOVQ out+32(FP), DX
	VMOVUPS X13, (DX)
	VZEROUPPER
	RET
