//go:build !noasm

#include "textflag.h"
#include "rows4_amd64.h"

// Four Q6_K rows against one token (decode), AVX-512 BW/VL with VNNI
// (VPDPWSSD). Per super-block each row's integer sum is the same exact
// int32 as q6_Kq8_Kr4AVX2's (Σ scale·Σ q6·q8 over the unsigned 6-bit
// values, minus 32·Σ scale·bsum); the rows' lanes then go through the
// AVX2 kernel's VPHADDD reduction and its float epilogue instruction for
// instruction, lane r of one XMM register doing row r's scalar sequence
// sum += (d·d_x)·float32(isum): bit-identical to the generic twin.
//
// A super-block's 256 values are read as four vectors of 64: with
// V = [ql[0..31] | ql[64..95]], W = [ql[32..63] | ql[96..127]] and
// Q = qh[0..63] (the two halves' high bits, side by side),
//
//	q1 = V&15 | (Q<<4)&48   elements [  0.. 31 | 128..159]
//	q2 = W&15 | (Q<<2)&48   elements [ 32.. 63 | 160..191]
//	q3 = V>>4 | Q&48        elements [ 64.. 95 | 192..223]
//	q4 = W>>4 | (Q>>2)&48   elements [ 96..127 | 224..255]
//
// (word shifts: the bits they carry across bytes are masked off). Each
// meets the token's quants in the same arrangement (Z28..Z31, loaded once
// per super-block for the four rows) in a VPMADDUBSW (int16 pairs, at
// most 2·63·128 in magnitude: no saturation), and a VPDPWSSD multiplies
// the pairs by their sub-block's scale (the scale words spread by VPERMW,
// indices q6kScaleIdx) and adds them into the row's int32 lanes.

// q6kScaleIdx: VPERMW indices, 64 bytes per group g = 0..3 of the layout
// above: words 0..7, 8..15, 16..23, 24..31 take the scales of sub-blocks
// 2g, 2g+1, 2g+8, 2g+9.
DATA q6kScaleIdx<>+0(SB)/8, $0x0000000000000000
DATA q6kScaleIdx<>+8(SB)/8, $0x0000000000000000
DATA q6kScaleIdx<>+16(SB)/8, $0x0001000100010001
DATA q6kScaleIdx<>+24(SB)/8, $0x0001000100010001
DATA q6kScaleIdx<>+32(SB)/8, $0x0008000800080008
DATA q6kScaleIdx<>+40(SB)/8, $0x0008000800080008
DATA q6kScaleIdx<>+48(SB)/8, $0x0009000900090009
DATA q6kScaleIdx<>+56(SB)/8, $0x0009000900090009
DATA q6kScaleIdx<>+64(SB)/8, $0x0002000200020002
DATA q6kScaleIdx<>+72(SB)/8, $0x0002000200020002
DATA q6kScaleIdx<>+80(SB)/8, $0x0003000300030003
DATA q6kScaleIdx<>+88(SB)/8, $0x0003000300030003
DATA q6kScaleIdx<>+96(SB)/8, $0x000a000a000a000a
DATA q6kScaleIdx<>+104(SB)/8, $0x000a000a000a000a
DATA q6kScaleIdx<>+112(SB)/8, $0x000b000b000b000b
DATA q6kScaleIdx<>+120(SB)/8, $0x000b000b000b000b
DATA q6kScaleIdx<>+128(SB)/8, $0x0004000400040004
DATA q6kScaleIdx<>+136(SB)/8, $0x0004000400040004
DATA q6kScaleIdx<>+144(SB)/8, $0x0005000500050005
DATA q6kScaleIdx<>+152(SB)/8, $0x0005000500050005
DATA q6kScaleIdx<>+160(SB)/8, $0x000c000c000c000c
DATA q6kScaleIdx<>+168(SB)/8, $0x000c000c000c000c
DATA q6kScaleIdx<>+176(SB)/8, $0x000d000d000d000d
DATA q6kScaleIdx<>+184(SB)/8, $0x000d000d000d000d
DATA q6kScaleIdx<>+192(SB)/8, $0x0006000600060006
DATA q6kScaleIdx<>+200(SB)/8, $0x0006000600060006
DATA q6kScaleIdx<>+208(SB)/8, $0x0007000700070007
DATA q6kScaleIdx<>+216(SB)/8, $0x0007000700070007
DATA q6kScaleIdx<>+224(SB)/8, $0x000e000e000e000e
DATA q6kScaleIdx<>+232(SB)/8, $0x000e000e000e000e
DATA q6kScaleIdx<>+240(SB)/8, $0x000f000f000f000f
DATA q6kScaleIdx<>+248(SB)/8, $0x000f000f000f000f
GLOBL q6kScaleIdx<>(SB), RODATA|NOPTR, $256

// Q6K_ROW(rowaddr, acc): one Q6_K row's super-block at rowaddr against the
// token's (DI; quants in Z28..Z31) into the int32 lanes of acc (Z13 zero,
// Z14 0x30 and Z15 0x0F bytes, Z24..Z27 the scale indices). The scales
// as words go to Z7 (its upper half zero); acc starts at −32·Σ scale·bsum
// (eight lanes, the rest zero). VPTERNLOGD $0xF8 is A | (B & C).
#define Q6K_ROW(rowaddr, acc) \
	LEAQ rowaddr, R13; \
	VPMOVSXBW 192(R13), Y7; \
	VPMADDWD 260(DI), Y7, Y6; \
	VPSLLD $5, Y6, Y6; \
	VPSUBD Z6, Z13, acc; \
	VPERMW Z7, Z24, Z16; \
	VPERMW Z7, Z25, Z17; \
	VPERMW Z7, Z26, Z18; \
	VPERMW Z7, Z27, Z19; \
	VMOVDQU 0(R13), Y8; \
	VINSERTI64X4 $1, 64(R13), Z8, Z8; \
	VMOVDQU 32(R13), Y9; \
	VINSERTI64X4 $1, 96(R13), Z9, Z9; \
	VMOVDQU64 128(R13), Z10; \
	VPANDD Z15, Z8, Z20; \
	VPSLLW $4, Z10, Z21; \
	VPTERNLOGD $0xF8, Z14, Z21, Z20; \
	VPMADDUBSW Z28, Z20, Z20; \
	VPDPWSSD Z16, Z20, acc; \
	VPANDD Z15, Z9, Z22; \
	VPSLLW $2, Z10, Z23; \
	VPTERNLOGD $0xF8, Z14, Z23, Z22; \
	VPMADDUBSW Z29, Z22, Z22; \
	VPDPWSSD Z17, Z22, acc; \
	VPSRLW $4, Z8, Z8; \
	VPANDD Z15, Z8, Z8; \
	VPTERNLOGD $0xF8, Z14, Z10, Z8; \
	VPMADDUBSW Z30, Z8, Z8; \
	VPDPWSSD Z18, Z8, acc; \
	VPSRLW $4, Z9, Z9; \
	VPANDD Z15, Z9, Z9; \
	VPSRLW $2, Z10, Z10; \
	VPTERNLOGD $0xF8, Z14, Z10, Z9; \
	VPMADDUBSW Z31, Z9, Z9; \
	VPDPWSSD Z19, Z9, acc

// Q6XQ(lo, hi, z, y): z = the token's 32 quants at lo(DI) in the low
// half, those at hi(DI) in the high half.
#define Q6XQ(lo, hi, z, y) \
	VMOVDQU64 lo(DI), y; \
	VINSERTI64X4 $1, hi(DI), z, z

// Q6KR4_SETUP: the constants of the four-row Q6_K kernels (Z13..Z15,
// Z24..Z27) and their running sums X12 zeroed.
// Q6KR4_SB: one super-block of four Q6_K rows (at SI, SI+R8, SI+2·R8,
// SI+R9 with R9 = 3·R8) against the token's Q8_K block at DI, added to the
// rows' running sums in X12's lanes: the token's quants in the layout of
// q1..q4 (Z28..Z31), each row's lanes (Q6K_ROW), folded to eight (FOLD4Z,
// integer adds, exact), then the AVX2 kernel's reduction and epilogue:
// lane r of X0 = row r's isum; sum += (d·d_x)·float32(isum).
#define Q6KR4_SETUP \
	MOVL $0x0F0F0F0F, AX; \
	VPBROADCASTD AX, Z15; \
	MOVL $0x30303030, AX; \
	VPBROADCASTD AX, Z14; \
	VPXORD Z13, Z13, Z13; \
	VMOVDQU64 q6kScaleIdx<>+0(SB), Z24; \
	VMOVDQU64 q6kScaleIdx<>+64(SB), Z25; \
	VMOVDQU64 q6kScaleIdx<>+128(SB), Z26; \
	VMOVDQU64 q6kScaleIdx<>+192(SB), Z27; \
	VXORPS X12, X12, X12

#define Q6KR4_SB \
	Q6XQ(4, 132, Z28, Y28); \
	Q6XQ(36, 164, Z29, Y29); \
	Q6XQ(68, 196, Z30, Y30); \
	Q6XQ(100, 228, Z31, Y31); \
	Q6K_ROW((SI), Z0); \
	Q6K_ROW((SI)(R8*1), Z1); \
	Q6K_ROW((SI)(R8*2), Z2); \
	Q6K_ROW((SI)(R9*1), Z3); \
	FOLD4Z; \
	HSUM4(Y0, Y1, Y2, Y3, X0, X1); \
	VCVTDQ2PS X0, X0; \
	F16X4(208, X8); \
	VBROADCASTSS (DI), X10; \
	VMULPS X10, X8, X8; \
	VMULPS X0, X8, X8; \
	VADDPS X8, X12, X12

// func q6_Kq8_Kr4AVX512(w *byte, wstride int, x *byte, nb int, out *[4]float32)
// Registers: Z0..Z3 the rows' int32 lanes of the super-block, X12 the
// four running sums; R9 = 3·wstride, R12 the prefetch pointer.
//
// Prefetch: per super-block 840 bytes (four rows' worth) of the region
// that starts eight rows on from its first row (R12): a mat-vec calls
// this for rows i..i+3, then i+4..i+7, …, so that is the call after
// next's four rows, one sequential stream. From memory (BenchmarkMatVecDRAM's shape, 2048-element rows; the
// variants in bench/results/2026-12-01-s8-cpuq6k/prefetch-variants) this
// read, medians of alternating runs on the 2-vCPU Zen VM, two threads
// 44.5 GB/s against 40.1 for the AVX2 kernel's distance (the next call's
// rows; 45.1 for the AVX2 kernel itself), one thread 28–34 against 25–31;
// without prefetch 12–14 (one thread), 21–26 (two); each row's own
// super-block 2, 4 or 8 blocks ahead 14–18 and 28–32.
TEXT ·q6_Kq8_Kr4AVX512(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*8), R12
	Q6KR4_SETUP
	PCALIGN $64
q6kr4v:
	PREFETCH_Q6K4(R12)
	ADDQ $840, R12
	Q6KR4_SB
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q6kr4v

	MOVQ out+32(FP), DX
	VMOVUPS X12, (DX)
	VZEROUPPER
	RET

// func q6_Kq8_Kr4x4AVX512(w *byte, x *byte, nb int, out *[4]float32)
// Four Q6_K rows of one half of a K x8 group (rows8k.go: per super-block
// the four rows' 210-byte super-blocks one after another) against one
// token: q6_Kq8_Kr4AVX512's arithmetic, bit for bit, on one sequential
// stream of 840 bytes a super-block, prefetched x8PrefetchQ6_K bytes
// ahead (x8prefetch_amd64.go).
TEXT ·q6_Kq8_Kr4x4AVX512(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ $210, R8
	MOVQ $630, R9
	MOVQ ·x8PrefetchQ6_K(SB), R12
	ADDQ SI, R12
	Q6KR4_SETUP
	PCALIGN $64
q6kr4x4v:
	PREFETCH2_Q6K4(R12)
	ADDQ $840, R12
	Q6KR4_SB
	ADDQ $840, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q6kr4x4v

	MOVQ out+24(FP), DX
	VMOVUPS X12, (DX)
	VZEROUPPER
	RET
