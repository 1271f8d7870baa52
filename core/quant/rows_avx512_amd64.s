//go:build !noasm

#include "textflag.h"
#include "rows4_amd64.h"
#include "rows8_amd64.h"

// Decode (one token, several weight rows) kernels with AVX-512: 512-bit
// weight loads and VNNI (VPDPBUSD: u8·s8 products summed by four into
// int32 lanes; VPDPWSSD: s16·s16 products summed by two into int32 lanes).
// Each computes the same exact integer sums as its AVX2 twin (whose int16
// intermediates never saturate: a VPMADDUBSW pair of nibble ≤ 15 and
// |q| ≤ 128 is at most 3840; of Q8_0 quants at most 2·127·127) and then
// the AVX2 twin's float epilogue instruction for instruction, each row's
// scalar block sequence in one lane: bit-identical to the generic twins.

// func q4_0q8_0r8tAVX512(w *byte, wstride int, x *byte, nb int, tab *byte, out *[8]float32)
// Eight Q4_0 rows against one token with its table (PrepareToken1). Per
// block, rows 0, 4, 1, 5 fill the four 128-bit lanes of Z1 (rows 2, 6, 3,
// 7: Z16); low nibbles meet the token's quants 0..15 (broadcast to every
// lane, Z11), high ones quants 16..31 (Z12), in two VPDPBUSDs per ZMM.
// The halves of the two sums are then Y3 = [r0|r4], Y4 = [r1|r5],
// Y5 = [r2|r6], Y6 = [r3|r7], the AVX2 kernel's layout: its three VPHADDDs
// and epilogue follow (minus 8·Σq; sum += sumi·(d_w·d_x)).
TEXT ·q4_0q8_0r8tAVX512(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ tab+32(FP), BX
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R9)(R8*4), R11
	LEAQ (SI)(R8*8), DX
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z15
	VXORPS Y0, Y0, Y0
q40r8tv:
	// The caller's next eight rows (the region after these) as one
	// sequential stream, as in q4_0q8_0r8tAVX2: 8·18 bytes of it per block.
	PREFETCHT0 0(DX)
	PREFETCHT0 64(DX)
	PREFETCHT0 128(DX)
	// The token's quants 0..15 and 16..31, in every 128-bit lane.
	VBROADCASTI32X4 2(DI), Z11
	VBROADCASTI32X4 18(DI), Z12
	// Rows 0, 4, 1, 5.
	VMOVDQU 2(SI), X1
	VINSERTI32X4 $1, 2(SI)(R8*4), Z1, Z1
	VINSERTI32X4 $2, 2(SI)(R8*1), Z1, Z1
	VINSERTI32X4 $3, 2(SI)(R10*1), Z1, Z1
	VPSRLW $4, Z1, Z2
	VPANDD Z15, Z1, Z1
	VPANDD Z15, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPDPBUSD Z11, Z1, Z3
	VPDPBUSD Z12, Z2, Z3
	// Rows 2, 6, 3, 7.
	VMOVDQU64 2(SI)(R8*2), X16
	VINSERTI32X4 $1, 2(SI)(R9*2), Z16, Z16
	VINSERTI32X4 $2, 2(SI)(R9*1), Z16, Z16
	VINSERTI32X4 $3, 2(SI)(R11*1), Z16, Z16
	VPSRLW $4, Z16, Z17
	VPANDD Z15, Z16, Z16
	VPANDD Z15, Z17, Z17
	VPXORD Z5, Z5, Z5
	VPDPBUSD Z11, Z16, Z5
	VPDPBUSD Z12, Z17, Z5
	// Y3 = [r0|r4], Y4 = [r1|r5], Y5 = [r2|r6], Y6 = [r3|r7].
	VEXTRACTI64X4 $1, Z3, Y4
	VEXTRACTI64X4 $1, Z5, Y6
	// The AVX2 kernel's reduction and epilogue.
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
	JNZ  q40r8tv
	MOVQ out+40(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// func q8_0q8_0r4AVX512(w *byte, wstride int, x *byte, nb int, out *[4]float32)
// Four Q8_0 rows against one token, in YMM registers (three vector ports
// where ZMM code has two). Each weight byte w becomes the unsigned w+128
// (XOR 0x80, Y15, folded into the load) for VPDPBUSD, whose int32 lanes
// start from −128·(sum of each four of the token's quants) (Y14, once per
// block): Σ w·q exactly, for any w, in two instructions per row where the
// AVX2 kernel's sign trick takes four. Then the AVX2 kernel's reduction
// and epilogue: sum = fma(sumi, d_w·d_x, sum).
TEXT ·q8_0q8_0r4AVX512(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R9)(R9*1), R11
	LEAQ (R10)(R8*2), R12
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Y15
	VXORPS X0, X0, X0
q80r4v:
	PREFETCHT0 2(SI)(R8*4) // the next four rows, as in q8_0q8_0r4AVX2
	PREFETCHT0 2(SI)(R10*1)
	PREFETCHT0 2(SI)(R11*1)
	PREFETCHT0 2(SI)(R12*1)
	VMOVDQU 2(DI), Y12
	// Y14 = −128·(sum of each four quants): the bias the rows start from.
	VPXOR Y13, Y13, Y13
	VPDPBUSD Y12, Y15, Y13
	VPXOR Y14, Y14, Y14
	VPSUBD Y13, Y14, Y14
	VMOVDQA Y14, Y5
	VPXOR 2(SI), Y15, Y1
	VPDPBUSD Y12, Y1, Y5
	VMOVDQA Y14, Y6
	VPXOR 2(SI)(R8*1), Y15, Y2
	VPDPBUSD Y12, Y2, Y6
	VMOVDQA Y14, Y7
	VPXOR 2(SI)(R8*2), Y15, Y3
	VPDPBUSD Y12, Y3, Y7
	VMOVDQA Y14, Y8
	VPXOR 2(SI)(R9*1), Y15, Y4
	VPDPBUSD Y12, Y4, Y8
	// Y5..Y8 = rows 0..3: the AVX2 kernel's reduction and epilogue.
	VPHADDD Y6, Y5, Y5
	VPHADDD Y8, Y7, Y7
	VPHADDD Y7, Y5, Y5
	VEXTRACTI128 $1, Y5, X6
	VPADDD X6, X5, X5
	VCVTDQ2PS X5, X5
	MOVWLZX (SI), AX
	VMOVD AX, X6
	VPINSRW $1, (SI)(R8*1), X6, X6
	VPINSRW $2, (SI)(R8*2), X6, X6
	VPINSRW $3, (SI)(R9*1), X6, X6
	VCVTPH2PS X6, X6
	VPBROADCASTW (DI), X4
	VCVTPH2PS X4, X4
	VMULPS X4, X6, X4
	VFMADD231PS X4, X5, X0
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q80r4v
	MOVQ out+32(FP), DX
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

DATA q4kShufL<>+0(SB)/8, $0x0f0e0d0c07060504
DATA q4kShufL<>+8(SB)/8, $0x0f0e0d0c0b0a0908
DATA q4kShufL<>+16(SB)/8, $0x0f0e0d0c07060504
DATA q4kShufL<>+24(SB)/8, $0x0f0e0d0c0b0a0908
DATA q4kShufL<>+32(SB)/8, $0x0f0e0d0c07060504
DATA q4kShufL<>+40(SB)/8, $0x0f0e0d0c0b0a0908
DATA q4kShufL<>+48(SB)/8, $0x0f0e0d0c07060504
DATA q4kShufL<>+56(SB)/8, $0x0f0e0d0c0b0a0908
GLOBL q4kShufL<>(SB), RODATA|NOPTR, $64
DATA q4kShufH<>+0(SB)/8, $0x0706050480808080
DATA q4kShufH<>+8(SB)/8, $0x0b0a090880808080
DATA q4kShufH<>+16(SB)/8, $0x0706050480808080
DATA q4kShufH<>+24(SB)/8, $0x0b0a090880808080
DATA q4kShufH<>+32(SB)/8, $0x0706050480808080
DATA q4kShufH<>+40(SB)/8, $0x0b0a090880808080
DATA q4kShufH<>+48(SB)/8, $0x0706050480808080
DATA q4kShufH<>+56(SB)/8, $0x0b0a090880808080
GLOBL q4kShufH<>(SB), RODATA|NOPTR, $64
DATA q4kShiftM<>+0(SB)/8, $0x0000000000000000
DATA q4kShiftM<>+8(SB)/8, $0x0004000400000000
DATA q4kShiftM<>+16(SB)/8, $0x0000000000000000
DATA q4kShiftM<>+24(SB)/8, $0x0004000400000000
DATA q4kShiftM<>+32(SB)/8, $0x0000000000000000
DATA q4kShiftM<>+40(SB)/8, $0x0004000400000000
DATA q4kShiftM<>+48(SB)/8, $0x0000000000000000
DATA q4kShiftM<>+56(SB)/8, $0x0004000400000000
GLOBL q4kShiftM<>(SB), RODATA|NOPTR, $64
DATA q4kMaskL<>+0(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q4kMaskL<>+8(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q4kMaskL<>+16(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q4kMaskL<>+24(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q4kMaskL<>+32(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q4kMaskL<>+40(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q4kMaskL<>+48(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q4kMaskL<>+56(SB)/8, $0x0f0f0f0f3f3f3f3f
GLOBL q4kMaskL<>(SB), RODATA|NOPTR, $64
DATA q4kHiMask<>+0(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q4kHiMask<>+8(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q4kHiMask<>+16(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q4kHiMask<>+24(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q4kHiMask<>+32(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q4kHiMask<>+40(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q4kHiMask<>+48(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q4kHiMask<>+56(SB)/8, $0xc0c0c0c0c0c0c0c0
GLOBL q4kHiMask<>(SB), RODATA|NOPTR, $64
DATA q4kSpread<>+0(SB)/8, $0x0000000000000000
DATA q4kSpread<>+8(SB)/8, $0x0008000800080008
DATA q4kSpread<>+16(SB)/8, $0x0000000000000000
DATA q4kSpread<>+24(SB)/8, $0x0008000800080008
DATA q4kSpread<>+32(SB)/8, $0x0002000200020002
DATA q4kSpread<>+40(SB)/8, $0x000a000a000a000a
DATA q4kSpread<>+48(SB)/8, $0x0002000200020002
DATA q4kSpread<>+56(SB)/8, $0x000a000a000a000a
DATA q4kSpread<>+64(SB)/8, $0x0001000100010001
DATA q4kSpread<>+72(SB)/8, $0x0009000900090009
DATA q4kSpread<>+80(SB)/8, $0x0001000100010001
DATA q4kSpread<>+88(SB)/8, $0x0009000900090009
DATA q4kSpread<>+96(SB)/8, $0x0003000300030003
DATA q4kSpread<>+104(SB)/8, $0x000b000b000b000b
DATA q4kSpread<>+112(SB)/8, $0x0003000300030003
DATA q4kSpread<>+120(SB)/8, $0x000b000b000b000b
DATA q4kSpread<>+128(SB)/8, $0x0004000400040004
DATA q4kSpread<>+136(SB)/8, $0x000c000c000c000c
DATA q4kSpread<>+144(SB)/8, $0x0004000400040004
DATA q4kSpread<>+152(SB)/8, $0x000c000c000c000c
DATA q4kSpread<>+160(SB)/8, $0x0006000600060006
DATA q4kSpread<>+168(SB)/8, $0x000e000e000e000e
DATA q4kSpread<>+176(SB)/8, $0x0006000600060006
DATA q4kSpread<>+184(SB)/8, $0x000e000e000e000e
DATA q4kSpread<>+192(SB)/8, $0x0005000500050005
DATA q4kSpread<>+200(SB)/8, $0x000d000d000d000d
DATA q4kSpread<>+208(SB)/8, $0x0005000500050005
DATA q4kSpread<>+216(SB)/8, $0x000d000d000d000d
DATA q4kSpread<>+224(SB)/8, $0x0007000700070007
DATA q4kSpread<>+232(SB)/8, $0x000f000f000f000f
DATA q4kSpread<>+240(SB)/8, $0x0007000700070007
DATA q4kSpread<>+248(SB)/8, $0x000f000f000f000f
GLOBL q4kSpread<>(SB), RODATA|NOPTR, $256
DATA q4kMinIdx<>+0(SB)/8, $0x0003000200010000
DATA q4kMinIdx<>+8(SB)/8, $0x000b000a00090008
DATA q4kMinIdx<>+16(SB)/8, $0x0007000600050004
DATA q4kMinIdx<>+24(SB)/8, $0x000f000e000d000c
DATA q4kMinIdx<>+32(SB)/8, $0x0013001200110010
DATA q4kMinIdx<>+40(SB)/8, $0x001b001a00190018
DATA q4kMinIdx<>+48(SB)/8, $0x0017001600150014
DATA q4kMinIdx<>+56(SB)/8, $0x001f001e001d001c
GLOBL q4kMinIdx<>(SB), RODATA|NOPTR, $64
DATA q4kBsumIdx<>+0(SB)/8, $0x0006000400020000
DATA q4kBsumIdx<>+8(SB)/8, $0x0006000400020000
DATA q4kBsumIdx<>+16(SB)/8, $0x000e000c000a0008
DATA q4kBsumIdx<>+24(SB)/8, $0x000e000c000a0008
DATA q4kBsumIdx<>+32(SB)/8, $0x0006000400020000
DATA q4kBsumIdx<>+40(SB)/8, $0x0006000400020000
DATA q4kBsumIdx<>+48(SB)/8, $0x000e000c000a0008
DATA q4kBsumIdx<>+56(SB)/8, $0x000e000c000a0008
GLOBL q4kBsumIdx<>(SB), RODATA|NOPTR, $64
DATA q4kRedIdx<>+0(SB)/8, $0x0000000200000000
DATA q4kRedIdx<>+8(SB)/8, $0x0000000600000004
DATA q4kRedIdx<>+16(SB)/8, $0x0000000a00000008
DATA q4kRedIdx<>+24(SB)/8, $0x0000000e0000000c
DATA q4kRedIdx<>+32(SB)/8, $0x0000000000000000
DATA q4kRedIdx<>+40(SB)/8, $0x0000000000000000
DATA q4kRedIdx<>+48(SB)/8, $0x0000000000000000
DATA q4kRedIdx<>+56(SB)/8, $0x0000000000000000
GLOBL q4kRedIdx<>(SB), RODATA|NOPTR, $64
DATA q4kDIdx<>+0(SB)/8, $0x0018001000080000
DATA q4kDIdx<>+8(SB)/8, $0x0019001100090001
DATA q4kDIdx<>+16(SB)/8, $0x0000000000000000
DATA q4kDIdx<>+24(SB)/8, $0x0000000000000000
DATA q4kDIdx<>+32(SB)/8, $0x0000000000000000
DATA q4kDIdx<>+40(SB)/8, $0x0000000000000000
DATA q4kDIdx<>+48(SB)/8, $0x0000000000000000
DATA q4kDIdx<>+56(SB)/8, $0x0000000000000000
GLOBL q4kDIdx<>(SB), RODATA|NOPTR, $64
DATA q4kOnes<>+0(SB)/8, $0x0001000100010001
DATA q4kOnes<>+8(SB)/8, $0x0001000100010001
DATA q4kOnes<>+16(SB)/8, $0x0001000100010001
DATA q4kOnes<>+24(SB)/8, $0x0001000100010001
GLOBL q4kOnes<>(SB), RODATA|NOPTR, $32

// XQ(lo, hi, z, y): z = the token's 32 quants at lo(DI) in the low half,
// those at hi(DI) in the high half.
#define XQ(lo, hi, z, y) \
	VMOVDQU64 lo(DI), y; \
	VINSERTI64X4 $1, hi(DI), z, z

// Q4KV_ROW(r, a0, a1, a2, a3): one Q4_K row's super-block (at register r) against the token's quants by sub-block pairs (Z16..Z19): each
// 64 bytes of nibbles split into low (sub-blocks [2j|2j+2]) and high
// ([2j+1|2j+3]) nibbles, multiplied with the quants by VPDPBUSD into fresh
// int32 lanes a0..a3: each lane the sum of four nibble·quant products,
// |·| ≤ 4·15·128 = 7680, so it packs to int16 exactly (Z11..Z13, Z27
// clobbered).
#define Q4KV_ROW(r, a0, a1, a2, a3) \
	VMOVDQU64 16(r), Z11; \
	VMOVDQU64 80(r), Z12; \
	VPSRLW $4, Z11, Z13; \
	VPSRLW $4, Z12, Z27; \
	VPANDD Z15, Z11, Z11; \
	VPANDD Z15, Z13, Z13; \
	VPANDD Z15, Z12, Z12; \
	VPANDD Z15, Z27, Z27; \
	VPXORD a0, a0, a0; \
	VPXORD a1, a1, a1; \
	VPXORD a2, a2, a2; \
	VPXORD a3, a3, a3; \
	VPDPBUSD Z16, Z11, a0; \
	VPDPBUSD Z17, Z13, a1; \
	VPDPBUSD Z18, Z12, a2; \
	VPDPBUSD Z19, Z27, a3

// Q4KV_PAIR(tab, a0..a3, b0..b3, acc): two rows' lanes (a: the first row,
// b: the second) packed to int16 per sub-block pair k (in each 128-bit
// lane four words of a, then four of b), times their sub-blocks' scales
// (spread from the pair's scale words tab by VPERMW, Z20..Z23), summed in
// pairs into acc: each int32 lane of acc then belongs to one row (per
// 128-bit lane: a, a, b, b). Exact.
#define Q4KV_PAIR(tab, a0, a1, a2, a3, b0, b1, b2, b3, acc) \
	VPACKSSDW b0, a0, Z11; \
	VPERMW tab, Z20, Z12; \
	VPMADDWD Z12, Z11, acc; \
	VPACKSSDW b1, a1, Z13; \
	VPERMW tab, Z21, Z27; \
	VPDPWSSD Z27, Z13, acc; \
	VPACKSSDW b2, a2, Z11; \
	VPERMW tab, Z22, Z12; \
	VPDPWSSD Z12, Z11, acc; \
	VPACKSSDW b3, a3, Z13; \
	VPERMW tab, Z23, Z27; \
	VPDPWSSD Z27, Z13, acc

// Q4KR4_SETUP: the constants of the four-row Q4_K kernels (Z15, Z20..Z23,
// Z28..Z31) and their running sums X14 zeroed.
// Q4KR4_SB: one super-block of four Q4_K rows (at SI, SI+R8, SI+2·R8,
// SI+R9 with R9 = 3·R8) against the token's Q8_K block at DI, added to
// the rows' running sums in X14's lanes (clobbers R11..R13), as described
// at q4_Kq8_Kr4AVX512 below:
//   - the four rows' 16-byte heads, a row per 128-bit lane (Z27); d and
//     dmin of rows 0..3 as eight floats, times d_x (Y26);
//   - scales and mins: per lane bytes sc0..7 (low nibble/6 bits from Z3's
//     VPSHUFB, the top two bits of sc4..7, m4..7 from Z4's), m0..7;
//   - mins: words m_j of two rows against bsums[2j]+bsums[2j+1] (per lane
//     int32 a, a, b, b);
//   - the token's quants by sub-block pairs [0|2], [1|3], [4|6], [5|7];
//   - rows 0, 1 into Z0, rows 2, 3 into Z1 (Q4KV_ROW, Q4KV_PAIR), folded
//     with the mins to Y3 = isum rows 0..3, summs rows 0..3;
//   - the AVX2 kernel's epilogue, both products in one YMM.
#define Q4KR4_SETUP \
	MOVL $0x0F0F0F0F, AX; \
	VPBROADCASTD AX, Z15; \
	VMOVDQU64 q4kSpread<>+0(SB), Z20; \
	VMOVDQU64 q4kSpread<>+64(SB), Z21; \
	VMOVDQU64 q4kSpread<>+128(SB), Z22; \
	VMOVDQU64 q4kSpread<>+192(SB), Z23; \
	VMOVDQU64 q4kMinIdx<>(SB), Z28; \
	VMOVDQU64 q4kBsumIdx<>(SB), Z29; \
	VMOVDQU64 q4kRedIdx<>(SB), Z30; \
	VMOVDQU64 q4kDIdx<>(SB), Z31; \
	VXORPS X14, X14, X14

#define Q4KR4_SB \
	VMOVDQU64 (SI), X27; \
	VINSERTI32X4 $1, (SI)(R8*1), Z27, Z27; \
	VINSERTI32X4 $2, (SI)(R8*2), Z27, Z27; \
	VINSERTI32X4 $3, (SI)(R9*1), Z27, Z27; \
	VPERMW Z27, Z31, Z26; \
	VCVTPH2PS X26, Y26; \
	VBROADCASTSS (DI), Y10; \
	VMULPS Y10, Y26, Y26; \
	VPSHUFB q4kShufL<>(SB), Z27, Z3; \
	VPSRLVW q4kShiftM<>(SB), Z3, Z3; \
	VPSHUFB q4kShufH<>(SB), Z27, Z4; \
	VPANDD q4kHiMask<>(SB), Z4, Z4; \
	VPSRLW $2, Z4, Z4; \
	VPTERNLOGD $0xE4, q4kMaskL<>(SB), Z4, Z3; \
	VPXORD Z5, Z5, Z5; \
	VPUNPCKLBW Z5, Z3, Z24; \
	VPUNPCKHBW Z5, Z3, Z2; \
	VEXTRACTI64X4 $1, Z24, Y25; \
	VMOVDQU 260(DI), Y4; \
	VPMADDWD q4kOnes<>(SB), Y4, Y4; \
	VPERMW Z4, Z29, Z4; \
	VPERMW Z2, Z28, Z2; \
	VPMADDWD Z4, Z2, Z2; \
	XQ(4, 68, Z16, Y16); \
	XQ(36, 100, Z17, Y17); \
	XQ(132, 196, Z18, Y18); \
	XQ(164, 228, Z19, Y19); \
	LEAQ (SI)(R8*1), R11; \
	LEAQ (SI)(R8*2), R12; \
	LEAQ (SI)(R9*1), R13; \
	Q4KV_ROW(SI, Z3, Z4, Z5, Z6); \
	Q4KV_ROW(R11, Z7, Z8, Z9, Z10); \
	Q4KV_PAIR(Z24, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z0); \
	Q4KV_ROW(R12, Z3, Z4, Z5, Z6); \
	Q4KV_ROW(R13, Z7, Z8, Z9, Z10); \
	Q4KV_PAIR(Z25, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z1); \
	VSHUFI64X2 $0x44, Z1, Z0, Z3; \
	VSHUFI64X2 $0xEE, Z1, Z0, Z4; \
	VPADDD Z4, Z3, Z3; \
	VSHUFI64X2 $0x88, Z2, Z3, Z4; \
	VSHUFI64X2 $0xDD, Z2, Z3, Z5; \
	VPADDD Z5, Z4, Z4; \
	VPSHUFD $0xB1, Z4, Z5; \
	VPADDD Z5, Z4, Z4; \
	VPERMD Z4, Z30, Z3; \
	VCVTDQ2PS Y3, Y3; \
	VMULPS Y3, Y26, Y26; \
	VEXTRACTF32X4 $1, Y26, X9; \
	VSUBPS X9, X26, X8; \
	VADDPS X8, X14, X14

// func q4_Kq8_Kr4AVX512(w *byte, wstride int, x *byte, nb int, out *[4]float32)
// Four Q4_K rows against one token (decode), bit-identical to
// q4_Kq8_Kr4AVX2 and the generic twin. Per super-block:
//   - the four rows' 16-byte heads (d, dmin, the 12 scale bytes) gathered
//     in one ZMM (a row per 128-bit lane, Z27) and the 6-bit scales and
//     mins of all four rows decoded at once (two VPSHUFBs, a variable word
//     shift, masks; per lane sc0..7, m0..7), widened to words: the scales
//     (Z24; rows 2, 3 also in Z25's low half) and mins (Z26);
//   - Σ m·(bsums[2j]+bsums[2j+1]) for each row from one VPMADDWD (Z2);
//   - each row's nibbles against the token by VPDPBUSD (Q4KV_ROW), two
//     rows' results packed to int16 and multiplied by their scales
//     (Q4KV_PAIR): rows 0, 1 into Z0, rows 2, 3 into Z1;
//   - the exact integer sums reduced to isum (Y3's lanes 0..3) and summs
//     (lanes 4..7), then the AVX2 kernel's float epilogue in lanes (the
//     isum and summs halves side by side in YMM), lane r doing row r's
//     scalar sequence: sum += (d_x·d)·isum − (d_x·dmin)·summs.
// Integer sums are exact in any order; the float operations and their
// order are the AVX2 kernel's, so the bits are the same. The bsums pairs
// are taken as int16 (|·| ≤ 32·128 for any Q8_K block the quantizer makes).
TEXT ·q4_Kq8_Kr4AVX512(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	Q4KR4_SETUP
	PCALIGN $64
q4kr4v:
	// The next call's four rows' super-blocks, as before.
	PREFETCHT0 (SI)(R8*4)
	PREFETCHT0 64(SI)(R8*4)
	PREFETCHT0 128(SI)(R8*4)
	LEAQ (SI)(R8*4), R10
	PREFETCHT0 (R10)(R8*1)
	PREFETCHT0 64(R10)(R8*1)
	PREFETCHT0 128(R10)(R8*1)
	PREFETCHT0 (R10)(R8*2)
	PREFETCHT0 64(R10)(R8*2)
	PREFETCHT0 128(R10)(R8*2)
	PREFETCHT0 (R10)(R9*1)
	PREFETCHT0 64(R10)(R9*1)
	PREFETCHT0 128(R10)(R9*1)
	Q4KR4_SB
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q4kr4v
	MOVQ out+32(FP), DX
	VMOVUPS X14, (DX)
	VZEROUPPER
	RET

// func q4_Kq8_Kr4x4AVX512(w *byte, x *byte, nb int, out *[4]float32)
// Four Q4_K rows of one half of a K x8 group (rows8k.go: per super-block
// the four rows' 144-byte super-blocks one after another) against one
// token: q4_Kq8_Kr4AVX512's arithmetic, bit for bit, on one sequential
// stream of 576 bytes a super-block, its nine cache lines prefetched
// x8PrefetchQ4_K bytes ahead (x8prefetch_amd64.go).
TEXT ·q4_Kq8_Kr4x4AVX512(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ $144, R8
	MOVQ $432, R9
	MOVQ ·x8PrefetchQ4_K(SB), R14
	Q4KR4_SETUP
	PCALIGN $64
q4kr4x4v:
	LEAQ (SI)(R14*1), R10
	PREFETCHT2 (R10)
	PREFETCHT2 64(R10)
	PREFETCHT2 128(R10)
	PREFETCHT2 192(R10)
	PREFETCHT2 256(R10)
	PREFETCHT2 320(R10)
	PREFETCHT2 384(R10)
	PREFETCHT2 448(R10)
	PREFETCHT2 512(R10)
	Q4KR4_SB
	ADDQ $576, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q4kr4x4v
	MOVQ out+24(FP), DX
	VMOVUPS X14, (DX)
	VZEROUPPER
	RET

// func q4_0q8_0r8x8AVX512(w *byte, x *byte, nb int, tab *byte, out *[8]float32)
// The eight rows of one Q4_0 x8 group (rows8i.go) against one token with
// its table: q4_0q8_0r8tAVX512 on one sequential stream, prefetched
// x8PrefetchQ4_0 bytes ahead (x8prefetch_amd64.go). Rows 0, 4, 1, 5 are the
// group's first 64 quant bytes as they are, rows 2, 6, 3, 7 the next 64;
// the eight scales one 16-byte load. The arithmetic is
// q4_0q8_0r8tAVX512's, bit for bit.
TEXT ·q4_0q8_0r8x8AVX512(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ tab+24(FP), BX
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z15
	VXORPS Y0, Y0, Y0
	MOVQ ·x8PrefetchQ4_0(SB), R11 // how far ahead to prefetch (x8prefetch_amd64.go)
	PCALIGN $64
q40r8x8v:
	X8_PF3
	VBROADCASTI32X4 2(DI), Z11
	VBROADCASTI32X4 18(DI), Z12
	VMOVDQU64 16(SI), Z1
	VPSRLW $4, Z1, Z2
	VPANDD Z15, Z1, Z1
	VPANDD Z15, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPDPBUSD Z11, Z1, Z3
	VPDPBUSD Z12, Z2, Z3
	VMOVDQU64 80(SI), Z16
	VPSRLW $4, Z16, Z17
	VPANDD Z15, Z16, Z16
	VPANDD Z15, Z17, Z17
	VPXORD Z5, Z5, Z5
	VPDPBUSD Z11, Z16, Z5
	VPDPBUSD Z12, Z17, Z5
	VEXTRACTI64X4 $1, Z3, Y4
	VEXTRACTI64X4 $1, Z5, Y6
	Q40_R8_SUMS
	VCVTPH2PS (SI), Y8
	Q40_R8_ACC
	ADDQ $144, SI
	ADDQ $34, DI
	ADDQ $8, BX
	DECQ CX
	JNZ  q40r8x8v
	MOVQ out+32(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// func q8_0q8_0r8x8AVX512(w *byte, x *byte, nb int, tab *byte, out *[8]float32)
// The eight rows of one Q8_0 x8 group (rows8i.go) against one token with
// its table: each 8-byte chunk of the eight rows is one ZMM (a row per
// 64-bit lane), made unsigned (XOR 0x80: w+128) for VPDPBUSD against the
// chunk of the token's quants in every lane; two accumulators, each row's
// two int32 lanes added (VPSRLQ, VPADDD) and narrowed (VPMOVQD), then
// 128·Σq off (the table's 8·Σq << 4): Σ w·q exactly. The epilogue is the
// one-row sequence sum = fma(sumi, d_w·d_x, sum): bit-identical to it.
TEXT ·q8_0q8_0r8x8AVX512(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ tab+24(FP), BX
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z15
	VXORPS Y0, Y0, Y0
	MOVQ ·x8PrefetchQ8_0(SB), R11 // how far ahead to prefetch (x8prefetch_amd64.go)
	PCALIGN $64
q80r8x8v:
	X8_PF5
	VPBROADCASTQ 2(DI), Z11
	VPBROADCASTQ 10(DI), Z12
	VPBROADCASTQ 18(DI), Z13
	VPBROADCASTQ 26(DI), Z14
	VPXORD 16(SI), Z15, Z1
	VPXORD 80(SI), Z15, Z2
	VPXORD 144(SI), Z15, Z3
	VPXORD 208(SI), Z15, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPDPBUSD Z11, Z1, Z5
	VPDPBUSD Z12, Z2, Z6
	VPDPBUSD Z13, Z3, Z5
	VPDPBUSD Z14, Z4, Z6
	VPADDD Z6, Z5, Z5
	VPSRLQ $32, Z5, Z6
	VPADDD Z6, Z5, Z5
	VPMOVQD Z5, Y5
	VPBROADCASTD 4(BX), Y7
	VPSLLD $4, Y7, Y7
	VPSUBD Y7, Y5, Y5
	VCVTDQ2PS Y5, Y5
	VCVTPH2PS (SI), Y8
	VBROADCASTSS (BX), Y9
	VMULPS Y9, Y8, Y8
	VFMADD231PS Y8, Y5, Y0
	ADDQ $272, SI
	ADDQ $34, DI
	ADDQ $8, BX
	DECQ CX
	JNZ  q80r8x8v
	MOVQ out+32(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// X8Q80_GROUP(P, ACC): one group's block of q8_0q8_0r8x8x4AVX512 (the x8
// group at P) into its sums ACC: q8_0q8_0r8x8AVX512's loop body with the
// token's chunks (Z11–Z14), 128·Σq (Y7) and d_x (Y9) already loaded.
#define X8Q80_GROUP(P, ACC) \
	PREFETCHT0 (P)(R11*1); \
	PREFETCHT0 64(P)(R11*1); \
	PREFETCHT0 128(P)(R11*1); \
	PREFETCHT0 192(P)(R11*1); \
	PREFETCHT0 256(P)(R11*1); \
	VPXORD 16(P), Z15, Z1; \
	VPXORD 80(P), Z15, Z2; \
	VPXORD 144(P), Z15, Z3; \
	VPXORD 208(P), Z15, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPDPBUSD Z11, Z1, Z5; \
	VPDPBUSD Z12, Z2, Z6; \
	VPDPBUSD Z13, Z3, Z5; \
	VPDPBUSD Z14, Z4, Z6; \
	VPADDD Z6, Z5, Z5; \
	VPSRLQ $32, Z5, Z6; \
	VPADDD Z6, Z5, Z5; \
	VPMOVQD Z5, Y5; \
	VPSUBD Y7, Y5, Y5; \
	VCVTDQ2PS Y5, Y5; \
	VCVTPH2PS (P), Y8; \
	VMULPS Y9, Y8, Y8; \
	VFMADD231PS Y8, Y5, ACC

// func q8_0q8_0r8x8x4AVX512(w *byte, stride int, x *byte, nb int, tab *byte, out *[32]float32)
// q8_0q8_0r8x8AVX512 on four x8 groups at once (group g at w + g·stride,
// its eight sums at out[8g:]): block by block, the token's block loaded
// once for the four groups' blocks. Each row gets the one-group kernel's
// operations in its order: the same bits (Kernel.DotGroups4).
TEXT ·q8_0q8_0r8x8x4AVX512(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ stride+8(FP), AX
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ tab+32(FP), BX
	LEAQ (SI)(AX*1), R8
	LEAQ (R8)(AX*1), R9
	LEAQ (R9)(AX*1), R10
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z15
	VXORPS Y16, Y16, Y16
	VXORPS Y17, Y17, Y17
	VXORPS Y18, Y18, Y18
	VXORPS Y19, Y19, Y19
	MOVQ ·x8PrefetchQ8_0(SB), R11
	PCALIGN $64
q80r8x8x4:
	VPBROADCASTQ 2(DI), Z11
	VPBROADCASTQ 10(DI), Z12
	VPBROADCASTQ 18(DI), Z13
	VPBROADCASTQ 26(DI), Z14
	VPBROADCASTD 4(BX), Y7
	VPSLLD $4, Y7, Y7
	VBROADCASTSS (BX), Y9
	X8Q80_GROUP(SI, Y16)
	X8Q80_GROUP(R8, Y17)
	X8Q80_GROUP(R9, Y18)
	X8Q80_GROUP(R10, Y19)
	ADDQ $272, SI
	ADDQ $272, R8
	ADDQ $272, R9
	ADDQ $272, R10
	ADDQ $34, DI
	ADDQ $8, BX
	DECQ CX
	JNZ  q80r8x8x4
	MOVQ out+40(FP), DX
	VMOVUPS Y16, (DX)
	VMOVUPS Y17, 32(DX)
	VMOVUPS Y18, 64(DX)
	VMOVUPS Y19, 96(DX)
	VZEROUPPER
	RET
