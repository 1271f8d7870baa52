//go:build !noasm

#include "textflag.h"

// The c16 Q4_K decode kernel (rows16k.go): sixteen rows in the lanes of
// one ZMM.

// C16_ROWS8(o0, …, o7): the sixteen-byte quad chunks at o0(R11) … o7(R11)
// (four bytes of each of four rows a chunk) transposed to rows by
// VPERMI2D (c16kRows in Z10, Z11): Z2 rows 0 and 1, Z3 rows 2 and 3, 32
// bytes a row (Z0, Z1 clobbered).
#define C16_ROWS8(o0, o1, o2, o3, o4, o5, o6, o7) \
	VMOVDQU o0(R11), X0; \
	VINSERTI32X4 $1, o1(R11), Z0, Z0; \
	VINSERTI32X4 $2, o2(R11), Z0, Z0; \
	VINSERTI32X4 $3, o3(R11), Z0, Z0; \
	VMOVDQU o4(R11), X1; \
	VINSERTI32X4 $1, o5(R11), Z1, Z1; \
	VINSERTI32X4 $2, o6(R11), Z1, Z1; \
	VINSERTI32X4 $3, o7(R11), Z1, Z1; \
	VMOVDQA64 Z10, Z2; \
	VPERMI2D Z1, Z0, Z2; \
	VMOVDQA64 Z11, Z3; \
	VPERMI2D Z1, Z0, Z3

// C16_STORE4(off): C16_ROWS8's four rows stored at off in the rows at DI,
// DI+BX, DI+2·BX, DI+R13 (Y4, Y5 clobbered).
#define C16_STORE4(off) \
	VMOVDQU Y2, off(DI); \
	VEXTRACTI64X4 $1, Z2, Y4; \
	VMOVDQU Y4, off(DI)(BX*1); \
	VMOVDQU Y3, off(DI)(BX*2); \
	VEXTRACTI64X4 $1, Z3, Y5; \
	VMOVDQU Y5, off(DI)(R13*1)

// C16_DW4(o0, o1, o2, o3, x): the dwords at o0(R10) … o3(R10) (a scale
// byte of each of a quad's four rows, the column's scale rows 16 bytes
// apart) into the lanes of x.
#define C16_DW4(o0, o1, o2, o3, x) \
	VMOVD o0(R10), x; \
	VPINSRD $1, o1(R10), x, x; \
	VPINSRD $2, o2(R10), x, x; \
	VPINSRD $3, o3(R10), x, x

// C16_DWROWS(x, off): dword r of x stored at off in row r (the rows at DI,
// DI+BX, DI+2·BX, DI+R13).
#define C16_DWROWS(x, off) \
	VPEXTRD $0, x, off(DI); \
	VPEXTRD $1, x, off(DI)(BX*1); \
	VPEXTRD $2, x, off(DI)(BX*2); \
	VPEXTRD $3, x, off(DI)(R13*1)

// C16_QUAD_BASES: from a column at SI and a row quad q in R8, the quad's
// d (R9 = SI + 8q), scale-byte dwords (R10 = SI + 4q) and quant chunks
// (R11 = SI + 16q); R8 becomes 16q.
#define C16_QUAD_BASES \
	LEAQ (SI)(R8*8), R9; \
	LEAQ (SI)(R8*4), R10; \
	SHLQ $4, R8; \
	LEAQ (SI)(R8*1), R11

// C16_QUAD_CONSTS: the transposes' tables, c16kT4 in every lane of Z12,
// c16kRows in Z10 and Z11.
#define C16_QUAD_CONSTS \
	VBROADCASTI32X4 c16kT4<>(SB), Z12; \
	VMOVDQU64 c16kRows<>+0(SB), Z10; \
	VMOVDQU64 c16kRows<>+64(SB), Z11

// C16_GATHER_ARGS: the quad gathers' arguments (group, q, nb, dst,
// rowStride, colStride) into SI, R8, CX, DI, BX, DX, R13 = 3·rowStride,
// then C16_QUAD_BASES and C16_QUAD_CONSTS.
#define C16_GATHER_ARGS \
	MOVQ group+0(FP), SI; \
	MOVQ q+8(FP), R8; \
	MOVQ nb+16(FP), CX; \
	MOVQ dst+24(FP), DI; \
	MOVQ rowStride+32(FP), BX; \
	MOVQ colStride+40(FP), DX; \
	LEAQ (BX)(BX*2), R13; \
	C16_QUAD_BASES; \
	C16_QUAD_CONSTS

// Q4KC16_CH(off, xl, xh, al, ah): the quant chunk at off(SI) (four bytes
// of each row), its low nibbles (masked by Z15's 0x0F) against the token's
// four quants at xl(DI) (broadcast) into al, its high nibbles left in
// place (the chunk masked by 0xF0: VPANDND with Z15) against those at
// xh(DI) into ah, which so sums 16 times the high nibbles' products
// (exactly: their scaled sum divided by 16 once, VPSRAD). The chunk is
// read twice, each AND folding its load.
#define Q4KC16_CH(off, xl, xh, al, ah) \
	VPANDD off(SI), Z15, Z1; \
	VPANDND off(SI), Z15, Z2; \
	VPDPBUSD.BCST xl(DI), Z1, al; \
	VPDPBUSD.BCST xh(DI), Z2, ah

// Q4KC16_HI(lo, hi, sh, dst): dst = the low nibble of hi's dword lanes
// under bits 4..5 taken from lo >> sh (the 6-bit scale or min of
// sub-blocks 4..7: scaleMinK4), by a bitwise select on Z15's 0x0F.
#define Q4KC16_HI(lo, hi, dst) \
	VPSRLD $2, lo, dst; \
	VPTERNLOGD $0xD8, Z15, hi, dst

// Q4KC16_MINS(b, h, dst): dst = m_k | m_{k+4}<<16 from the dword lanes
// of scale bytes b (4+k) and h (8+k): b's low six bits, its top two at
// bits 20, 21 (b<<14 under Z30's 0x0030003F, b's bits 0..5 kept by the
// same mask), h's high nibble at bits 16..19 (h<<12 under Z31's 0xF0000).
// h clobbered.
#define Q4KC16_MINS(b, h, dst) \
	VPSLLD $14, b, dst; \
	VPTERNLOGD $0xA8, Z30, b, dst; \
	VPSLLD $12, h, h; \
	VPTERNLOGD $0xF8, Z31, h, dst

// Q4KC16_CONSTS: the Q4_K col16 kernels' constants, the sum Z0 zeroed.
#define Q4KC16_CONSTS \
	MOVL $0x0F0F0F0F, AX; \
	VPBROADCASTD AX, Z15; \
	MOVL $63, AX; \
	VPBROADCASTD AX, Z14; \
	MOVL $0x00010001, AX; \
	VPBROADCASTD AX, Y13; \
	MOVL $0x0030003F, AX; \
	VPBROADCASTD AX, Z30; \
	MOVL $0x000F0000, AX; \
	VPBROADCASTD AX, Z31; \
	VPXORD Z0, Z0, Z0

// Q4KC16_HEAD: a column's start: the token's pair sums at (SP) (VPMADDWD of its bsums),
// the eight sub-block sums Z16..Z23 zeroed.
#define Q4KC16_HEAD \
	VMOVDQU 260(DI), Y1; \
	VPMADDWD Y13, Y1, Y1; \
	VEXTRACTI128 $1, Y1, X2; \
	VPSLLD $16, X2, X2; \
	VPBLENDW $0xAA, X2, X1, X1; \
	VMOVDQU X1, (SP); \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23

// Q4KC16_TAIL: a column's end, after its 32 quant chunks:
//   - isum: sub-block s times its scale, the low-nibble sub-blocks (even
//     s) and the high ones (odd s: 16 times their sums, Q4KC16_CH) summed
//     apart, the second sum divided by 16 once (exact: every term a
//     multiple of 16, |sum| < 2^28);
//   - summs: the mins times the token's sub-block sums, mins k and k+4
//     side by side as words against the pair sums' words at 4k(SP) by
//     VPDPWSSD: m_k | m_{k+4}<<16 = (b & 0x3F) | ((b<<14) & 0x300000) |
//     ((h<<12) & 0xF0000) of scale bytes b = 4+k and h = 8+k (the masks
//     in Z30, Z31);
//   - sum += (d_x·d)·isum − (d_x·dmin)·summs in Z0.
#define Q4KC16_TAIL \
	VPMOVZXBD 64(SI), Z1; \
	VPMOVZXBD 80(SI), Z2; \
	VPMOVZXBD 96(SI), Z3; \
	VPMOVZXBD 112(SI), Z4; \
	VPMOVZXBD 128(SI), Z5; \
	VPMOVZXBD 144(SI), Z6; \
	VPMOVZXBD 160(SI), Z7; \
	VPMOVZXBD 176(SI), Z8; \
	VPMOVZXBD 192(SI), Z9; \
	VPMOVZXBD 208(SI), Z10; \
	VPMOVZXBD 224(SI), Z11; \
	VPMOVZXBD 240(SI), Z12; \
	VPANDD Z14, Z1, Z24; \
	VPMULLD Z24, Z16, Z16; \
	VPANDD Z14, Z2, Z24; \
	VPMULLD Z24, Z17, Z17; \
	VPANDD Z14, Z3, Z24; \
	VPMULLD Z24, Z18, Z18; \
	VPANDD Z14, Z4, Z24; \
	VPMULLD Z24, Z19, Z19; \
	Q4KC16_HI(Z1, Z9, Z24); \
	VPMULLD Z24, Z20, Z20; \
	Q4KC16_HI(Z2, Z10, Z24); \
	VPMULLD Z24, Z21, Z21; \
	Q4KC16_HI(Z3, Z11, Z24); \
	VPMULLD Z24, Z22, Z22; \
	Q4KC16_HI(Z4, Z12, Z24); \
	VPMULLD Z24, Z23, Z23; \
	VPADDD Z18, Z16, Z16; \
	VPADDD Z22, Z20, Z20; \
	VPADDD Z19, Z17, Z17; \
	VPADDD Z23, Z21, Z21; \
	VPADDD Z20, Z16, Z16; \
	VPADDD Z21, Z17, Z17; \
	VPSRAD $4, Z17, Z17; \
	VPADDD Z17, Z16, Z16; \
	Q4KC16_MINS(Z5, Z9, Z24); \
	Q4KC16_MINS(Z6, Z10, Z25); \
	Q4KC16_MINS(Z7, Z11, Z26); \
	Q4KC16_MINS(Z8, Z12, Z27); \
	VPXORD Z28, Z28, Z28; \
	VPXORD Z29, Z29, Z29; \
	VPDPWSSD.BCST 0(SP), Z24, Z28; \
	VPDPWSSD.BCST 4(SP), Z25, Z29; \
	VPDPWSSD.BCST 8(SP), Z26, Z28; \
	VPDPWSSD.BCST 12(SP), Z27, Z29; \
	VPADDD Z29, Z28, Z24; \
	VCVTPH2PS (SI), Z1; \
	VCVTPH2PS 32(SI), Z2; \
	VBROADCASTSS (DI), Z3; \
	VMULPS Z3, Z1, Z1; \
	VMULPS Z3, Z2, Z2; \
	VCVTDQ2PS Z16, Z16; \
	VCVTDQ2PS Z24, Z24; \
	VMULPS Z16, Z1, Z1; \
	VMULPS Z24, Z2, Z2; \
	VSUBPS Z2, Z1, Z1; \
	VADDPS Z1, Z0, Z0

// func rows16C16Q4KAVX512(w *byte, x *byte, nb int, out *[16]float32)
// The sixteen rows of a c16 Q4_K group (nb columns of 2304 bytes at w)
// against one token's Q8_K row x. Per column:
//   - each of the 32 quant chunks split into low and high nibbles and
//     multiplied with the token's quants by VPDPBUSD (the quants broadcast),
//     sub-block s summed in Z16+s (lane r: row r's Σ q4·q8 of sub-block s);
//   - the scales and mins of all sixteen rows unpacked in lanes from the
//     column's twelve scale rows (VPMOVZXBD, masks, shifts, selects:
//     scaleMinK4), isum = Σ sc·Σ and summs = Σ m·(bsums[2s]+bsums[2s+1])
//     (the token's pair sums from one VPMADDWD, put on the stack and
//     broadcast);
//   - the float epilogue in lanes, lane r doing row r's scalar sequence of
//     dotQ4_KQ8_KGeneric: sum += (d_x·d)·isum − (d_x·dmin)·summs, unfused.
// The integer sums are exact in any order and the float operations are
// the generic kernel's, in its order: the bits of each row's Dot.
// The column c16PrefetchQ4K bytes ahead is prefetched to L2 through the
// body (36 PREFETCHT2 a column): its four header lines at the top, then
// before each quant chunk the line that chunk reads. On the AMD Zen 5 VM
// of session 20 this read from memory a median 3.0 % faster than the
// burst of all 36 at the top it replaced with the meter ~30–35 GB/s and
// 4.6 % faster at ~46–56 (44 in-process measurements, 1B gate and down
// shapes; −1.9 % to +24 %), 7 % faster from cache, and decoded the 1B
// Q4_K_M file 3–7 % faster in-process (bench/results/2026-12-07-s20-q4kpf).
TEXT ·rows16C16Q4KAVX512(SB), NOSPLIT, $32-32
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ ·c16PrefetchQ4K(SB), R11
	Q4KC16_CONSTS
	PCALIGN $64
q4kc16:
	LEAQ (SI)(R11*1), R10
	PREFETCHT2 0(R10)
	PREFETCHT2 64(R10)
	PREFETCHT2 128(R10)
	PREFETCHT2 192(R10)
	Q4KC16_HEAD
	PREFETCHT2 256(R10)
	Q4KC16_CH(256, 4, 36, Z16, Z17)
	PREFETCHT2 320(R10)
	Q4KC16_CH(320, 8, 40, Z16, Z17)
	PREFETCHT2 384(R10)
	Q4KC16_CH(384, 12, 44, Z16, Z17)
	PREFETCHT2 448(R10)
	Q4KC16_CH(448, 16, 48, Z16, Z17)
	PREFETCHT2 512(R10)
	Q4KC16_CH(512, 20, 52, Z16, Z17)
	PREFETCHT2 576(R10)
	Q4KC16_CH(576, 24, 56, Z16, Z17)
	PREFETCHT2 640(R10)
	Q4KC16_CH(640, 28, 60, Z16, Z17)
	PREFETCHT2 704(R10)
	Q4KC16_CH(704, 32, 64, Z16, Z17)
	PREFETCHT2 768(R10)
	Q4KC16_CH(768, 68, 100, Z18, Z19)
	PREFETCHT2 832(R10)
	Q4KC16_CH(832, 72, 104, Z18, Z19)
	PREFETCHT2 896(R10)
	Q4KC16_CH(896, 76, 108, Z18, Z19)
	PREFETCHT2 960(R10)
	Q4KC16_CH(960, 80, 112, Z18, Z19)
	PREFETCHT2 1024(R10)
	Q4KC16_CH(1024, 84, 116, Z18, Z19)
	PREFETCHT2 1088(R10)
	Q4KC16_CH(1088, 88, 120, Z18, Z19)
	PREFETCHT2 1152(R10)
	Q4KC16_CH(1152, 92, 124, Z18, Z19)
	PREFETCHT2 1216(R10)
	Q4KC16_CH(1216, 96, 128, Z18, Z19)
	PREFETCHT2 1280(R10)
	Q4KC16_CH(1280, 132, 164, Z20, Z21)
	PREFETCHT2 1344(R10)
	Q4KC16_CH(1344, 136, 168, Z20, Z21)
	PREFETCHT2 1408(R10)
	Q4KC16_CH(1408, 140, 172, Z20, Z21)
	PREFETCHT2 1472(R10)
	Q4KC16_CH(1472, 144, 176, Z20, Z21)
	PREFETCHT2 1536(R10)
	Q4KC16_CH(1536, 148, 180, Z20, Z21)
	PREFETCHT2 1600(R10)
	Q4KC16_CH(1600, 152, 184, Z20, Z21)
	PREFETCHT2 1664(R10)
	Q4KC16_CH(1664, 156, 188, Z20, Z21)
	PREFETCHT2 1728(R10)
	Q4KC16_CH(1728, 160, 192, Z20, Z21)
	PREFETCHT2 1792(R10)
	Q4KC16_CH(1792, 196, 228, Z22, Z23)
	PREFETCHT2 1856(R10)
	Q4KC16_CH(1856, 200, 232, Z22, Z23)
	PREFETCHT2 1920(R10)
	Q4KC16_CH(1920, 204, 236, Z22, Z23)
	PREFETCHT2 1984(R10)
	Q4KC16_CH(1984, 208, 240, Z22, Z23)
	PREFETCHT2 2048(R10)
	Q4KC16_CH(2048, 212, 244, Z22, Z23)
	PREFETCHT2 2112(R10)
	Q4KC16_CH(2112, 216, 248, Z22, Z23)
	PREFETCHT2 2176(R10)
	Q4KC16_CH(2176, 220, 252, Z22, Z23)
	PREFETCHT2 2240(R10)
	Q4KC16_CH(2240, 224, 256, Z22, Z23)
	Q4KC16_TAIL
	ADDQ $2304, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q4kc16
	MOVQ out+24(FP), DX
	VMOVUPS Z0, (DX)
	VZEROUPPER
	RET

// func rows16C16Q4KAVX512NoPF(w *byte, x *byte, nb int, out *[16]float32)
// rows16C16Q4KAVX512 without its software prefetch (c16Q4KPrefetch): the
// same instructions, less the 36 PREFETCHT2 a column.
TEXT ·rows16C16Q4KAVX512NoPF(SB), NOSPLIT, $32-32
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	Q4KC16_CONSTS
	PCALIGN $64
q4kc16n:
	Q4KC16_HEAD
	Q4KC16_CH(256, 4, 36, Z16, Z17)
	Q4KC16_CH(320, 8, 40, Z16, Z17)
	Q4KC16_CH(384, 12, 44, Z16, Z17)
	Q4KC16_CH(448, 16, 48, Z16, Z17)
	Q4KC16_CH(512, 20, 52, Z16, Z17)
	Q4KC16_CH(576, 24, 56, Z16, Z17)
	Q4KC16_CH(640, 28, 60, Z16, Z17)
	Q4KC16_CH(704, 32, 64, Z16, Z17)
	Q4KC16_CH(768, 68, 100, Z18, Z19)
	Q4KC16_CH(832, 72, 104, Z18, Z19)
	Q4KC16_CH(896, 76, 108, Z18, Z19)
	Q4KC16_CH(960, 80, 112, Z18, Z19)
	Q4KC16_CH(1024, 84, 116, Z18, Z19)
	Q4KC16_CH(1088, 88, 120, Z18, Z19)
	Q4KC16_CH(1152, 92, 124, Z18, Z19)
	Q4KC16_CH(1216, 96, 128, Z18, Z19)
	Q4KC16_CH(1280, 132, 164, Z20, Z21)
	Q4KC16_CH(1344, 136, 168, Z20, Z21)
	Q4KC16_CH(1408, 140, 172, Z20, Z21)
	Q4KC16_CH(1472, 144, 176, Z20, Z21)
	Q4KC16_CH(1536, 148, 180, Z20, Z21)
	Q4KC16_CH(1600, 152, 184, Z20, Z21)
	Q4KC16_CH(1664, 156, 188, Z20, Z21)
	Q4KC16_CH(1728, 160, 192, Z20, Z21)
	Q4KC16_CH(1792, 196, 228, Z22, Z23)
	Q4KC16_CH(1856, 200, 232, Z22, Z23)
	Q4KC16_CH(1920, 204, 236, Z22, Z23)
	Q4KC16_CH(1984, 208, 240, Z22, Z23)
	Q4KC16_CH(2048, 212, 244, Z22, Z23)
	Q4KC16_CH(2112, 216, 248, Z22, Z23)
	Q4KC16_CH(2176, 220, 252, Z22, Z23)
	Q4KC16_CH(2240, 224, 256, Z22, Z23)
	Q4KC16_TAIL
	ADDQ $2304, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q4kc16n
	MOVQ out+24(FP), DX
	VMOVUPS Z0, (DX)
	VZEROUPPER
	RET

// func prep4x16Q4KAVX512(group *byte, q int, nb int, u *byte)
// prep4x16Q4KGeneric: rows 4q..4q+3 of a c16 Q4_K group prepared for the
// tile kernels (prep4Q4_KBlock bytes a super-block) as the group lies.
// Per column: the quad's d and dmin converted (four of each side by
// side); its scale bytes gathered as twelve dwords (byte b of the four
// rows), the 6-bit scales and mins decoded four rows at a time
// (scaleMinK4: masks and shifts per byte), transposed to rows by VPSHUFB
// and widened; its quant chunks (sixteen bytes a chunk: four of each row)
// transposed to rows by VPERMI2D, eight chunks at a time, and split into
// low and high nibbles.
TEXT ·prep4x16Q4KAVX512(SB), NOSPLIT, $0-32
	MOVQ group+0(FP), SI
	MOVQ q+8(FP), R8
	MOVQ nb+16(FP), CX
	MOVQ u+24(FP), DI
	C16_QUAD_BASES
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z15
	MOVL $0x3F3F3F3F, AX
	VPBROADCASTD AX, X14
	MOVL $0x30303030, AX
	VPBROADCASTD AX, X13
	C16_QUAD_CONSTS
p16k:
	VCVTPH2PS (R9), X0
	VMOVUPS X0, 1216(DI)
	VCVTPH2PS 32(R9), X0
	VMOVUPS X0, 1232(DI)
	C16_DW4(64, 80, 96, 112, X1)
	C16_DW4(128, 144, 160, 176, X2)
	C16_DW4(192, 208, 224, 240, X3)
	VPAND X14, X1, X4
	VPSRLD $2, X1, X5
	VPAND X13, X5, X5
	VPAND X15, X3, X6
	VPOR X6, X5, X5
	VPAND X14, X2, X6
	VPSRLD $2, X2, X7
	VPAND X13, X7, X7
	VPSRLD $4, X3, X8
	VPAND X15, X8, X8
	VPOR X8, X7, X7
	VPSHUFB X12, X4, X4
	VPSHUFB X12, X5, X5
	VPSHUFB X12, X6, X6
	VPSHUFB X12, X7, X7
	VPUNPCKLDQ X5, X4, X8
	VPUNPCKHDQ X5, X4, X9
	VPMOVZXBD X8, Z8
	VPSLLD $16, Z8, Z16
	VPORD Z16, Z8, Z8
	VMOVDQU32 Z8, 1024(DI)
	VPMOVZXBD X9, Z9
	VPSLLD $16, Z9, Z16
	VPORD Z16, Z9, Z9
	VMOVDQU32 Z9, 1088(DI)
	VPUNPCKLDQ X7, X6, X8
	VPUNPCKHDQ X7, X6, X9
	VPMOVZXBW X8, Y8
	VMOVDQU Y8, 1152(DI)
	VPMOVZXBW X9, Y9
	VMOVDQU Y9, 1184(DI)
	C16_ROWS8(256, 320, 384, 448, 512, 576, 640, 704)
	VPSRLW $4, Z2, Z4
	VPANDD Z15, Z2, Z2
	VPANDD Z15, Z4, Z4
	VMOVDQU32 Z2, 0(DI)
	VMOVDQU32 Z4, 128(DI)
	VPSRLW $4, Z3, Z5
	VPANDD Z15, Z3, Z3
	VPANDD Z15, Z5, Z5
	VMOVDQU32 Z3, 64(DI)
	VMOVDQU32 Z5, 192(DI)
	C16_ROWS8(768, 832, 896, 960, 1024, 1088, 1152, 1216)
	VPSRLW $4, Z2, Z4
	VPANDD Z15, Z2, Z2
	VPANDD Z15, Z4, Z4
	VMOVDQU32 Z2, 256(DI)
	VMOVDQU32 Z4, 384(DI)
	VPSRLW $4, Z3, Z5
	VPANDD Z15, Z3, Z3
	VPANDD Z15, Z5, Z5
	VMOVDQU32 Z3, 320(DI)
	VMOVDQU32 Z5, 448(DI)
	C16_ROWS8(1280, 1344, 1408, 1472, 1536, 1600, 1664, 1728)
	VPSRLW $4, Z2, Z4
	VPANDD Z15, Z2, Z2
	VPANDD Z15, Z4, Z4
	VMOVDQU32 Z2, 512(DI)
	VMOVDQU32 Z4, 640(DI)
	VPSRLW $4, Z3, Z5
	VPANDD Z15, Z3, Z3
	VPANDD Z15, Z5, Z5
	VMOVDQU32 Z3, 576(DI)
	VMOVDQU32 Z5, 704(DI)
	C16_ROWS8(1792, 1856, 1920, 1984, 2048, 2112, 2176, 2240)
	VPSRLW $4, Z2, Z4
	VPANDD Z15, Z2, Z2
	VPANDD Z15, Z4, Z4
	VMOVDQU32 Z2, 768(DI)
	VMOVDQU32 Z4, 896(DI)
	VPSRLW $4, Z3, Z5
	VPANDD Z15, Z3, Z3
	VPANDD Z15, Z5, Z5
	VMOVDQU32 Z3, 832(DI)
	VMOVDQU32 Z5, 960(DI)
	ADDQ $2304, R9
	ADDQ $2304, R10
	ADDQ $2304, R11
	ADDQ $1248, DI
	DECQ CX
	JNZ  p16k
	VZEROUPPER
	RET

// c16kT4: VPSHUFB indices transposing a 4×4 byte block (dword s of row bytes → dword r).
DATA c16kT4<>+0(SB)/8, $0x0d0905010c080400
DATA c16kT4<>+8(SB)/8, $0x0f0b07030e0a0602
GLOBL c16kT4<>(SB), RODATA|NOPTR, $16

// c16kRows: VPERMI2D indices taking rows 0, 1 (then 2, 3) of eight chunks (A: four, B: four; dword 4t+r) to row order (dword 8r+t).
DATA c16kRows<>+0(SB)/8, $0x0000000400000000
DATA c16kRows<>+8(SB)/8, $0x0000000c00000008
DATA c16kRows<>+16(SB)/8, $0x0000001400000010
DATA c16kRows<>+24(SB)/8, $0x0000001c00000018
DATA c16kRows<>+32(SB)/8, $0x0000000500000001
DATA c16kRows<>+40(SB)/8, $0x0000000d00000009
DATA c16kRows<>+48(SB)/8, $0x0000001500000011
DATA c16kRows<>+56(SB)/8, $0x0000001d00000019
DATA c16kRows<>+64(SB)/8, $0x0000000600000002
DATA c16kRows<>+72(SB)/8, $0x0000000e0000000a
DATA c16kRows<>+80(SB)/8, $0x0000001600000012
DATA c16kRows<>+88(SB)/8, $0x0000001e0000001a
DATA c16kRows<>+96(SB)/8, $0x0000000700000003
DATA c16kRows<>+104(SB)/8, $0x0000000f0000000b
DATA c16kRows<>+112(SB)/8, $0x0000001700000013
DATA c16kRows<>+120(SB)/8, $0x0000001f0000001b
GLOBL c16kRows<>(SB), RODATA|NOPTR, $128

// Q6KC16_STEP(qh, a, b, x0, x1, x2, x3, c0, c1, c2, c3): one qh chunk of
// the sixteen rows (at qh(SI)) and the two ql chunks it completes (a: the
// low half, elements l..l+3 of groups 0 and 2; b: groups 1 and 3): each
// group's 6-bit values (its nibble, and its qh bits 2g, 2g+1 moved to
// bits 4, 5 by a word shift and Z14's 0x30 mask, merged by VPTERNLOGD
// under Z15's 0x0F) against the token's four quants at xg(DI) (broadcast)
// into cg.
#define Q6KC16_STEP(qh, a, b, x0, x1, x2, x3, c0, c1, c2, c3) \
	VMOVDQU64 qh(SI), Z1; \
	VPSLLW $4, Z1, Z4; \
	VPANDD Z14, Z4, Z4; \
	VPTERNLOGD $0xF8, a(SI), Z15, Z4; \
	VPDPBUSD.BCST x0(DI), Z4, c0; \
	VPSLLW $2, Z1, Z5; \
	VPANDD Z14, Z5, Z5; \
	VPTERNLOGD $0xF8, b(SI), Z15, Z5; \
	VPDPBUSD.BCST x1(DI), Z5, c1; \
	VPSRLW $4, a(SI), Z2; \
	VPANDD Z14, Z1, Z6; \
	VPTERNLOGD $0xF8, Z15, Z2, Z6; \
	VPDPBUSD.BCST x2(DI), Z6, c2; \
	VPSRLW $4, b(SI), Z3; \
	VPSRLW $2, Z1, Z7; \
	VPANDD Z14, Z7, Z7; \
	VPTERNLOGD $0xF8, Z15, Z3, Z7; \
	VPDPBUSD.BCST x3(DI), Z7, c3

// func rows16C16Q6KAVX512(w *byte, x *byte, nb int, out *[16]float32)
// The sixteen rows of a c16 Q6_K group (nb columns of 3360 bytes at w)
// against one token's Q8_K row x. Per column: the unsigned 6-bit values
// of each 16-element scale block j summed against the token's quants in
// Z16+j by VPDPBUSD (Q6KC16_STEP); then per j the token's 32·bsums[j]
// taken off (the values' offset of 32: Σ (q−32)·x = Σ q·x − 32·Σ x),
// times the rows' int8 scales (VPMOVSXBD), summed to isum; the float step
// in lanes, lane r doing row r's scalar sequence of dotQ6_KQ8_KGeneric:
// sum += (d·d_x)·isum, unfused. The column c16PrefetchQ6K bytes ahead is
// prefetched to L2 a few lines before each step (53 PREFETCHT2 a column,
// in address order: spread, not in a burst, which read from memory 24–36 %
// slower on the Zen 5 VM of session 20). Exact integers, the generic float
// operations in their order: each row's Dot bits.
TEXT ·rows16C16Q6KAVX512(SB), NOSPLIT, $64-32
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ ·c16PrefetchQ6K(SB), R11
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z15
	MOVL $0x30303030, AX
	VPBROADCASTD AX, Z14
	VPXORD Z0, Z0, Z0
	PCALIGN $64
q6kc16:
	LEAQ (SI)(R11*1), R10
	VPMOVSXWD 260(DI), Z1
	VPSLLD $5, Z1, Z1
	VMOVDQU32 Z1, (SP)
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31
	PREFETCHT2 0(R10)
	PREFETCHT2 64(R10)
	PREFETCHT2 128(R10)
	PREFETCHT2 192(R10)
	Q6KC16_STEP(2336, 288, 800, 4, 36, 68, 100, Z16, Z18, Z20, Z22)
	PREFETCHT2 256(R10)
	PREFETCHT2 320(R10)
	PREFETCHT2 384(R10)
	PREFETCHT2 448(R10)
	Q6KC16_STEP(2400, 352, 864, 8, 40, 72, 104, Z16, Z18, Z20, Z22)
	PREFETCHT2 512(R10)
	PREFETCHT2 576(R10)
	PREFETCHT2 640(R10)
	PREFETCHT2 704(R10)
	Q6KC16_STEP(2464, 416, 928, 12, 44, 76, 108, Z16, Z18, Z20, Z22)
	PREFETCHT2 768(R10)
	PREFETCHT2 832(R10)
	PREFETCHT2 896(R10)
	PREFETCHT2 960(R10)
	Q6KC16_STEP(2528, 480, 992, 16, 48, 80, 112, Z16, Z18, Z20, Z22)
	PREFETCHT2 1024(R10)
	PREFETCHT2 1088(R10)
	PREFETCHT2 1152(R10)
	PREFETCHT2 1216(R10)
	Q6KC16_STEP(2592, 544, 1056, 20, 52, 84, 116, Z17, Z19, Z21, Z23)
	PREFETCHT2 1280(R10)
	PREFETCHT2 1344(R10)
	PREFETCHT2 1408(R10)
	Q6KC16_STEP(2656, 608, 1120, 24, 56, 88, 120, Z17, Z19, Z21, Z23)
	PREFETCHT2 1472(R10)
	PREFETCHT2 1536(R10)
	PREFETCHT2 1600(R10)
	Q6KC16_STEP(2720, 672, 1184, 28, 60, 92, 124, Z17, Z19, Z21, Z23)
	PREFETCHT2 1664(R10)
	PREFETCHT2 1728(R10)
	PREFETCHT2 1792(R10)
	Q6KC16_STEP(2784, 736, 1248, 32, 64, 96, 128, Z17, Z19, Z21, Z23)
	PREFETCHT2 1856(R10)
	PREFETCHT2 1920(R10)
	PREFETCHT2 1984(R10)
	Q6KC16_STEP(2848, 1312, 1824, 132, 164, 196, 228, Z24, Z26, Z28, Z30)
	PREFETCHT2 2048(R10)
	PREFETCHT2 2112(R10)
	PREFETCHT2 2176(R10)
	Q6KC16_STEP(2912, 1376, 1888, 136, 168, 200, 232, Z24, Z26, Z28, Z30)
	PREFETCHT2 2240(R10)
	PREFETCHT2 2304(R10)
	PREFETCHT2 2368(R10)
	Q6KC16_STEP(2976, 1440, 1952, 140, 172, 204, 236, Z24, Z26, Z28, Z30)
	PREFETCHT2 2432(R10)
	PREFETCHT2 2496(R10)
	PREFETCHT2 2560(R10)
	Q6KC16_STEP(3040, 1504, 2016, 144, 176, 208, 240, Z24, Z26, Z28, Z30)
	PREFETCHT2 2624(R10)
	PREFETCHT2 2688(R10)
	PREFETCHT2 2752(R10)
	Q6KC16_STEP(3104, 1568, 2080, 148, 180, 212, 244, Z25, Z27, Z29, Z31)
	PREFETCHT2 2816(R10)
	PREFETCHT2 2880(R10)
	PREFETCHT2 2944(R10)
	Q6KC16_STEP(3168, 1632, 2144, 152, 184, 216, 248, Z25, Z27, Z29, Z31)
	PREFETCHT2 3008(R10)
	PREFETCHT2 3072(R10)
	PREFETCHT2 3136(R10)
	Q6KC16_STEP(3232, 1696, 2208, 156, 188, 220, 252, Z25, Z27, Z29, Z31)
	PREFETCHT2 3200(R10)
	PREFETCHT2 3264(R10)
	PREFETCHT2 3328(R10)
	Q6KC16_STEP(3296, 1760, 2272, 160, 192, 224, 256, Z25, Z27, Z29, Z31)
	VPSUBD.BCST 0(SP), Z16, Z16
	VPMOVSXBD 32(SI), Z1
	VPMULLD Z1, Z16, Z16
	VPSUBD.BCST 4(SP), Z17, Z17
	VPMOVSXBD 48(SI), Z1
	VPMULLD Z1, Z17, Z17
	VPSUBD.BCST 8(SP), Z18, Z18
	VPMOVSXBD 64(SI), Z1
	VPMULLD Z1, Z18, Z18
	VPSUBD.BCST 12(SP), Z19, Z19
	VPMOVSXBD 80(SI), Z1
	VPMULLD Z1, Z19, Z19
	VPSUBD.BCST 16(SP), Z20, Z20
	VPMOVSXBD 96(SI), Z1
	VPMULLD Z1, Z20, Z20
	VPSUBD.BCST 20(SP), Z21, Z21
	VPMOVSXBD 112(SI), Z1
	VPMULLD Z1, Z21, Z21
	VPSUBD.BCST 24(SP), Z22, Z22
	VPMOVSXBD 128(SI), Z1
	VPMULLD Z1, Z22, Z22
	VPSUBD.BCST 28(SP), Z23, Z23
	VPMOVSXBD 144(SI), Z1
	VPMULLD Z1, Z23, Z23
	VPSUBD.BCST 32(SP), Z24, Z24
	VPMOVSXBD 160(SI), Z1
	VPMULLD Z1, Z24, Z24
	VPSUBD.BCST 36(SP), Z25, Z25
	VPMOVSXBD 176(SI), Z1
	VPMULLD Z1, Z25, Z25
	VPSUBD.BCST 40(SP), Z26, Z26
	VPMOVSXBD 192(SI), Z1
	VPMULLD Z1, Z26, Z26
	VPSUBD.BCST 44(SP), Z27, Z27
	VPMOVSXBD 208(SI), Z1
	VPMULLD Z1, Z27, Z27
	VPSUBD.BCST 48(SP), Z28, Z28
	VPMOVSXBD 224(SI), Z1
	VPMULLD Z1, Z28, Z28
	VPSUBD.BCST 52(SP), Z29, Z29
	VPMOVSXBD 240(SI), Z1
	VPMULLD Z1, Z29, Z29
	VPSUBD.BCST 56(SP), Z30, Z30
	VPMOVSXBD 256(SI), Z1
	VPMULLD Z1, Z30, Z30
	VPSUBD.BCST 60(SP), Z31, Z31
	VPMOVSXBD 272(SI), Z1
	VPMULLD Z1, Z31, Z31
	VPADDD Z24, Z16, Z16
	VPADDD Z25, Z17, Z17
	VPADDD Z26, Z18, Z18
	VPADDD Z27, Z19, Z19
	VPADDD Z28, Z20, Z20
	VPADDD Z29, Z21, Z21
	VPADDD Z30, Z22, Z22
	VPADDD Z31, Z23, Z23
	VPADDD Z20, Z16, Z16
	VPADDD Z21, Z17, Z17
	VPADDD Z22, Z18, Z18
	VPADDD Z23, Z19, Z19
	VPADDD Z18, Z16, Z16
	VPADDD Z19, Z17, Z17
	VPADDD Z17, Z16, Z16
	VCVTPH2PS (SI), Z1
	VBROADCASTSS (DI), Z2
	VMULPS Z2, Z1, Z1
	VCVTDQ2PS Z16, Z16
	VMULPS Z16, Z1, Z1
	VADDPS Z1, Z0, Z0
	ADDQ $3360, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q6kc16
	MOVQ out+24(FP), DX
	VMOVUPS Z0, (DX)
	VZEROUPPER
	RET

// func gather4C16Q6KAVX512(group *byte, q int, nb int, dst *byte, rowStride, colStride int)
// gather4C16Q6KGeneric: rows 4q..4q+3 of each Q6_K c16 column written to
// dst in the file layout, row i of column j's super-block at
// dst + i·rowStride + j·colStride (the prep's scratch: 210, 840; a group
// turned back into rows: the row bytes, 210): the quad's ql and qh
// chunks (sixteen bytes a chunk, four of each row) transposed to rows by
// VPERMI2D (c16kRows, eight chunks at a time), its scale bytes by VPSHUFB
// and VPERMD, d moved.
TEXT ·gather4C16Q6KAVX512(SB), NOSPLIT, $0-48
	C16_GATHER_ARGS
	VMOVDQU64 c16kT16<>(SB), Z13
g6k:
	MOVWLZX 0(R9), AX
	MOVW AX, 208(DI)
	MOVWLZX 2(R9), AX
	MOVW AX, 208(DI)(BX*1)
	MOVWLZX 4(R9), AX
	MOVW AX, 208(DI)(BX*2)
	MOVWLZX 6(R9), AX
	MOVW AX, 208(DI)(R13*1)
	C16_DW4(32, 48, 64, 80, X0)
	C16_DW4(96, 112, 128, 144, X1)
	C16_DW4(160, 176, 192, 208, X2)
	C16_DW4(224, 240, 256, 272, X3)
	VINSERTI32X4 $1, X1, Z0, Z0
	VINSERTI32X4 $2, X2, Z0, Z0
	VINSERTI32X4 $3, X3, Z0, Z0
	VPSHUFB Z12, Z0, Z0
	VPERMD Z0, Z13, Z0
	VMOVDQU X0, X1
	VMOVDQU X1, 192(DI)
	VEXTRACTI32X4 $1, Z0, X1
	VMOVDQU X1, 192(DI)(BX*1)
	VEXTRACTI32X4 $2, Z0, X1
	VMOVDQU X1, 192(DI)(BX*2)
	VEXTRACTI32X4 $3, Z0, X1
	VMOVDQU X1, 192(DI)(R13*1)
	C16_ROWS8(288, 352, 416, 480, 544, 608, 672, 736)
	C16_STORE4(0)
	C16_ROWS8(800, 864, 928, 992, 1056, 1120, 1184, 1248)
	C16_STORE4(32)
	C16_ROWS8(1312, 1376, 1440, 1504, 1568, 1632, 1696, 1760)
	C16_STORE4(64)
	C16_ROWS8(1824, 1888, 1952, 2016, 2080, 2144, 2208, 2272)
	C16_STORE4(96)
	C16_ROWS8(2336, 2400, 2464, 2528, 2592, 2656, 2720, 2784)
	C16_STORE4(128)
	C16_ROWS8(2848, 2912, 2976, 3040, 3104, 3168, 3232, 3296)
	C16_STORE4(160)
	ADDQ $3360, R9
	ADDQ $3360, R10
	ADDQ $3360, R11
	ADDQ DX, DI
	DECQ CX
	JNZ  g6k
	VZEROUPPER
	RET

// func gather4C16Q4KAVX512(group *byte, q int, nb int, dst *byte, rowStride, colStride int)
// gather4C16Q6KAVX512 for Q4_K: d, dmin moved; the twelve scale bytes of
// each row by a 4×4 byte transpose (VPSHUFB) of each four, stored a dword
// at a time; the quant chunks transposed to rows by VPERMI2D.
TEXT ·gather4C16Q4KAVX512(SB), NOSPLIT, $0-48
	C16_GATHER_ARGS
g4k:
	MOVWLZX 0(R9), AX
	MOVW AX, 0(DI)
	MOVWLZX 32(R9), AX
	MOVW AX, 2(DI)
	MOVWLZX 2(R9), AX
	MOVW AX, 0(DI)(BX*1)
	MOVWLZX 34(R9), AX
	MOVW AX, 2(DI)(BX*1)
	MOVWLZX 4(R9), AX
	MOVW AX, 0(DI)(BX*2)
	MOVWLZX 36(R9), AX
	MOVW AX, 2(DI)(BX*2)
	MOVWLZX 6(R9), AX
	MOVW AX, 0(DI)(R13*1)
	MOVWLZX 38(R9), AX
	MOVW AX, 2(DI)(R13*1)
	C16_DW4(64, 80, 96, 112, X1)
	VPSHUFB X12, X1, X1
	C16_DWROWS(X1, 4)
	C16_DW4(128, 144, 160, 176, X2)
	VPSHUFB X12, X2, X2
	C16_DWROWS(X2, 8)
	C16_DW4(192, 208, 224, 240, X3)
	VPSHUFB X12, X3, X3
	C16_DWROWS(X3, 12)
	C16_ROWS8(256, 320, 384, 448, 512, 576, 640, 704)
	C16_STORE4(16)
	C16_ROWS8(768, 832, 896, 960, 1024, 1088, 1152, 1216)
	C16_STORE4(48)
	C16_ROWS8(1280, 1344, 1408, 1472, 1536, 1600, 1664, 1728)
	C16_STORE4(80)
	C16_ROWS8(1792, 1856, 1920, 1984, 2048, 2112, 2176, 2240)
	C16_STORE4(112)
	ADDQ $2304, R9
	ADDQ $2304, R10
	ADDQ $2304, R11
	ADDQ DX, DI
	DECQ CX
	JNZ  g4k
	VZEROUPPER
	RET

// c16kT16: VPERMD indices taking four 128-bit lanes of four rows' dwords (lane k: dword r) to rows (row r: lane k's dword r, k = 0..3).
DATA c16kT16<>+0(SB)/8, $0x0000000400000000
DATA c16kT16<>+8(SB)/8, $0x0000000c00000008
DATA c16kT16<>+16(SB)/8, $0x0000000500000001
DATA c16kT16<>+24(SB)/8, $0x0000000d00000009
DATA c16kT16<>+32(SB)/8, $0x0000000600000002
DATA c16kT16<>+40(SB)/8, $0x0000000e0000000a
DATA c16kT16<>+48(SB)/8, $0x0000000700000003
DATA c16kT16<>+56(SB)/8, $0x0000000f0000000b
GLOBL c16kT16<>(SB), RODATA|NOPTR, $64
