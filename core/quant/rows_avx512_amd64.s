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

// Index vectors for VPERMW: word i of the result is word idx[i] of the
// eight scales of a Q4_K row; Z24..Z27 pick sub-blocks [0|2], [1|3],
// [4|6], [5|7] (sixteen words each half).
DATA q4kScaleIdx<>+0(SB)/8, $0x0000000000000000
DATA q4kScaleIdx<>+8(SB)/8, $0x0000000000000000
DATA q4kScaleIdx<>+16(SB)/8, $0x0000000000000000
DATA q4kScaleIdx<>+24(SB)/8, $0x0000000000000000
DATA q4kScaleIdx<>+32(SB)/8, $0x0002000200020002
DATA q4kScaleIdx<>+40(SB)/8, $0x0002000200020002
DATA q4kScaleIdx<>+48(SB)/8, $0x0002000200020002
DATA q4kScaleIdx<>+56(SB)/8, $0x0002000200020002
DATA q4kScaleIdx<>+64(SB)/8, $0x0001000100010001
DATA q4kScaleIdx<>+72(SB)/8, $0x0001000100010001
DATA q4kScaleIdx<>+80(SB)/8, $0x0001000100010001
DATA q4kScaleIdx<>+88(SB)/8, $0x0001000100010001
DATA q4kScaleIdx<>+96(SB)/8, $0x0003000300030003
DATA q4kScaleIdx<>+104(SB)/8, $0x0003000300030003
DATA q4kScaleIdx<>+112(SB)/8, $0x0003000300030003
DATA q4kScaleIdx<>+120(SB)/8, $0x0003000300030003
DATA q4kScaleIdx<>+128(SB)/8, $0x0004000400040004
DATA q4kScaleIdx<>+136(SB)/8, $0x0004000400040004
DATA q4kScaleIdx<>+144(SB)/8, $0x0004000400040004
DATA q4kScaleIdx<>+152(SB)/8, $0x0004000400040004
DATA q4kScaleIdx<>+160(SB)/8, $0x0006000600060006
DATA q4kScaleIdx<>+168(SB)/8, $0x0006000600060006
DATA q4kScaleIdx<>+176(SB)/8, $0x0006000600060006
DATA q4kScaleIdx<>+184(SB)/8, $0x0006000600060006
DATA q4kScaleIdx<>+192(SB)/8, $0x0005000500050005
DATA q4kScaleIdx<>+200(SB)/8, $0x0005000500050005
DATA q4kScaleIdx<>+208(SB)/8, $0x0005000500050005
DATA q4kScaleIdx<>+216(SB)/8, $0x0005000500050005
DATA q4kScaleIdx<>+224(SB)/8, $0x0007000700070007
DATA q4kScaleIdx<>+232(SB)/8, $0x0007000700070007
DATA q4kScaleIdx<>+240(SB)/8, $0x0007000700070007
DATA q4kScaleIdx<>+248(SB)/8, $0x0007000700070007
GLOBL q4kScaleIdx<>(SB), RODATA|NOPTR, $256

// Q4K_ROW(rowoff, acc, mins): one Q4_K row's super-block (at rowoff, an
// address mode relative to SI) against the token's (DI; its quants by
// sub-block pairs in Z28..Z31). The 6-bit scales and mins are decoded in
// integer registers as in the AVX2 kernel; mins·bsums go to the int32
// lanes of mins (as in the AVX2 kernel); the scales, as words, are spread
// by VPERMW to [sc_a × 16 | sc_b × 16] for sub-block pairs (a, b), and
// per 64 bytes of nibbles: low and high nibbles (sub-blocks [2j|2j+2] and
// [2j+1|2j+3]) times the quants by VPMADDUBSW (int16 pairs), times the
// scales and summed into acc by VPDPWSSD: Σ sc·Σ q4·q8, exact.
#define Q4K_ROW(rowoff, acc, mins) \
	LEAQ rowoff, R13; \
	PREFETCHT0 (R13)(R8*4); \
	PREFETCHT0 64(R13)(R8*4); \
	PREFETCHT0 128(R13)(R8*4); \
	MOVL 4(R13), AX; MOVL 8(R13), BX; MOVL 12(R13), DX; \
	MOVL AX, R10; ANDL $0x3f3f3f3f, R10; \
	MOVL DX, R11; ANDL $0x0f0f0f0f, R11; \
	SHRL $6, AX; ANDL $0x03030303, AX; SHLL $4, AX; ORL AX, R11; \
	MOVL BX, R12; ANDL $0x3f3f3f3f, R12; \
	SHRL $4, DX; ANDL $0x0f0f0f0f, DX; \
	SHRL $6, BX; ANDL $0x03030303, BX; SHLL $4, BX; ORL BX, DX; \
	SHLQ $32, R11; ORQ R10, R11; VMOVQ R11, X8; VPMOVZXBW X8, X8; \
	SHLQ $32, DX; ORQ R12, DX; VMOVQ DX, X12; VPMOVZXBW X12, X12; \
	VPUNPCKHWD X12, X12, X9; VPUNPCKLWD X12, X12, X12; VINSERTI128 $1, X9, Y12, Y12; \
	VPMADDWD 260(DI), Y12, mins; \
	VPERMW Z8, Z24, Z16; \
	VPERMW Z8, Z25, Z17; \
	VPERMW Z8, Z26, Z18; \
	VPERMW Z8, Z27, Z19; \
	VMOVDQU64 16(R13), Z20; \
	VPSRLW $4, Z20, Z21; \
	VPANDD Z15, Z20, Z20; \
	VPANDD Z15, Z21, Z21; \
	VPMADDUBSW Z28, Z20, Z20; \
	VPMADDUBSW Z29, Z21, Z21; \
	VPXORD acc, acc, acc; \
	VPDPWSSD Z16, Z20, acc; \
	VPDPWSSD Z17, Z21, acc; \
	VMOVDQU64 80(R13), Z22; \
	VPSRLW $4, Z22, Z23; \
	VPANDD Z15, Z22, Z22; \
	VPANDD Z15, Z23, Z23; \
	VPMADDUBSW Z30, Z22, Z22; \
	VPMADDUBSW Z31, Z23, Z23; \
	VPDPWSSD Z18, Z22, acc; \
	VPDPWSSD Z19, Z23, acc

// XQ(lo, hi, z): z = the token's 32 quants at lo(DI) in the low half,
// those at hi(DI) in the high half.
#define XQ(lo, hi, z, y) \
	VMOVDQU64 lo(DI), y; \
	VINSERTI64X4 $1, hi(DI), z, z

// func q4_Kq8_Kr4AVX512(w *byte, wstride int, x *byte, nb int, out *[4]float32)
// Four Q4_K rows against one token (decode), as q4_Kq8_Kr4AVX2: per
// super-block each row's exact isum (Z0..Z3, folded to eight lanes) and
// summs (Y4..Y7), the AVX2 kernel's VPHADDD reduction and its float
// epilogue in the lanes of X14, lane r doing row r's scalar sequence.
TEXT ·q4_Kq8_Kr4AVX512(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z15
	VMOVDQU64 q4kScaleIdx<>+0(SB), Z24
	VMOVDQU64 q4kScaleIdx<>+64(SB), Z25
	VMOVDQU64 q4kScaleIdx<>+128(SB), Z26
	VMOVDQU64 q4kScaleIdx<>+192(SB), Z27
	VXORPS X14, X14, X14
	PCALIGN $64
q4kr4v:
	// The token's quants by sub-block pairs [0|2], [1|3], [4|6], [5|7].
	XQ(4, 68, Z28, Y28)
	XQ(36, 100, Z29, Y29)
	XQ(132, 196, Z30, Y30)
	XQ(164, 228, Z31, Y31)
	Q4K_ROW((SI), Z0, Y4)
	Q4K_ROW((SI)(R8*1), Z1, Y5)
	Q4K_ROW((SI)(R8*2), Z2, Y6)
	Q4K_ROW((SI)(R9*1), Z3, Y7)
	// Fold each row's sixteen lanes to eight (integer adds, exact).
	FOLD4Z
	// The AVX2 kernel's reduction and epilogue.
	HSUM4(Y0, Y1, Y2, Y3, X0, X1)
	HSUM4(Y4, Y5, Y6, Y7, X4, X5)
	VCVTDQ2PS X0, X0
	VCVTDQ2PS X4, X4
	F16X4(0, X8)
	F16X4(2, X9)
	VBROADCASTSS (DI), X10
	VMULPS X10, X8, X8
	VMULPS X10, X9, X9
	VMULPS X0, X8, X8
	VMULPS X4, X9, X9
	VSUBPS X9, X8, X8
	VADDPS X8, X14, X14
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q4kr4v
	MOVQ out+32(FP), DX
	VMOVUPS X14, (DX)
	VZEROUPPER
	RET

// func q4_0q8_0r8x8AVX512(w *byte, x *byte, nb int, tab *byte, out *[8]float32)
// The eight rows of one Q4_0 x8 group (rows8i.go) against one token with
// its table: q4_0q8_0r8tAVX512 on one sequential stream, prefetched 4608
// bytes (32 blocks) ahead (q4_0q8_0r8x8AVX2). Rows 0, 4, 1, 5 are the
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
	PCALIGN $64
q40r8x8v:
	PREFETCHT0 4608(SI)
	PREFETCHT0 4672(SI)
	PREFETCHT0 4736(SI)
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
	PCALIGN $64
q80r8x8v:
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
