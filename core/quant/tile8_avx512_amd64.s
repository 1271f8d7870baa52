//go:build !noasm

#include "textflag.h"

// Two weight rows against two eight-token tiles (tile8Kernel.pair) with
// AVX-512 VNNI. A ZMM register holds sixteen tokens: tile ta's eight in
// lanes 0..7, tile tb's in lanes 8..15, so each 32-byte chunk of the two
// tiles is one 512-bit operand. A weight row's four bytes of a chunk are
// broadcast to the sixteen lanes and VPDPBUSD multiplies them with the
// tokens' four quants and adds the four products to the lane's int32 sum:
// one instruction for what VPMADDUBSW + VPADDW (+ VPMADDWD) do in the AVX2
// kernels. The integer sums are the same: the AVX2 kernels' int16 partial
// sums never saturate (each lane adds at most 16 products of |nibble| ≤ 15
// and |q| ≤ 128, ≤ 30720; Q8_0 pairs stay ≤ 2·127·127), so both compute
// the exact Σ w·q. Every float step is the AVX2 kernels' (the generic
// twins'), lane by lane: results are bit-identical.
//
// Output layout (as the AVX2 pair kernels): row r0's results for ta at
// out[0:8], row r0+1's at out[8:16], for tb at out[32:40] and out[40:48].

// TILES(off, z, y): z = the 32 bytes at off(DI) (tile ta) in the low half,
// those at off(DX) (tile tb) in the high half.
#define TILES(off, z, y) \
	VMOVDQU64 off(DI), y; \
	VINSERTI64X4 $1, off(DX), z, z

// DOT2(wa, wb, acc0, acc1): a chunk of both tiles (Z8) against the
// four unsigned bytes of row 0 at wa and row 1 at wb, into acc0 and acc1.
#define DOT2(wa, wb, acc0, acc1) \
	VPBROADCASTD wa, Z10; \
	VPDPBUSD Z8, Z10, acc0; \
	VPBROADCASTD wb, Z11; \
	VPDPBUSD Z8, Z11, acc1

// STORE2: Z0 (row r0) and Z1 (row r0+1) to the output layout at DX.
#define STORE2 \
	VMOVUPS Y0, (DX); \
	VEXTRACTF64X4 $1, Z0, 128(DX); \
	VMOVUPS Y1, 32(DX); \
	VEXTRACTF64X4 $1, Z1, 160(DX)

// OCT_ARGS: an oct kernel's arguments (u0, u1, ta, tb, nb) into BX, SI,
// DI, DX, CX.
#define OCT_ARGS \
	MOVQ u0+0(FP), BX; \
	MOVQ u1+8(FP), SI; \
	MOVQ ta+16(FP), DI; \
	MOVQ tb+24(FP), DX; \
	MOVQ nb+32(FP), CX

// OCT_RET: the eight rows' sums (Z24..Z31) stored to out0 (rows 0..3)
// and out1 (rows 4..7) (OCT_STORE4, below), and return. (These two name
// arguments: defined before the first TEXT, so that go vet's asmdecl does not
// read them as the preceding function's.)
#define OCT_RET \
	MOVQ out0+40(FP), DX; \
	OCT_STORE4(Z24, Y24, Z25, Y25, Z26, Y26, Z27, Y27); \
	MOVQ out1+48(FP), DX; \
	OCT_STORE4(Z28, Y28, Z29, Y29, Z30, Y30, Z31, Y31); \
	VZEROUPPER; \
	RET

// func q4_0q8_0r2x16AVX512(w *byte, wstride int, u, ta, tb *byte, nb int, out *float32)
// Rows r0, r0+1 of Q4_0 (w at row r0; u at their unpacked nibbles, row
// r0+1's 32 bytes after row r0's, 128 bytes per block): per block the
// unsigned nibbles against the quants (even chunks into Z2/Z3, odd ones
// into Z4/Z5: two short dependency chains per row, integer adds only),
// minus 8·Σq per token: Σ(nibble−8)·q; then sum += sumi·(d_w·d_x).
TEXT ·q4_0q8_0r2x16AVX512(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ u+16(FP), BX
	MOVQ ta+24(FP), DI
	MOVQ tb+32(FP), DX
	MOVQ nb+40(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
q40r2x16v:
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	TILES(64, Z8, Y8)
	DOT2(0(BX), 32(BX), Z2, Z3)
	TILES(96, Z8, Y8)
	DOT2(4(BX), 36(BX), Z4, Z5)
	TILES(128, Z8, Y8)
	DOT2(8(BX), 40(BX), Z2, Z3)
	TILES(160, Z8, Y8)
	DOT2(12(BX), 44(BX), Z4, Z5)
	TILES(192, Z8, Y8)
	DOT2(16(BX), 48(BX), Z2, Z3)
	TILES(224, Z8, Y8)
	DOT2(20(BX), 52(BX), Z4, Z5)
	TILES(256, Z8, Y8)
	DOT2(24(BX), 56(BX), Z2, Z3)
	TILES(288, Z8, Y8)
	DOT2(28(BX), 60(BX), Z4, Z5)
	// sumi = Σ nibble·q − 8·Σq, per row and token.
	VPADDD Z4, Z2, Z2
	VPADDD Z5, Z3, Z3
	TILES(32, Z12, Y12)
	VPSUBD Z12, Z2, Z2
	VPSUBD Z12, Z3, Z3
	VCVTDQ2PS Z2, Z2
	VCVTDQ2PS Z3, Z3
	// Z13 = d_x of the sixteen tokens.
	VMOVUPS (DI), Y13
	VINSERTF64X4 $1, (DX), Z13, Z13
	// Row r0: sum += sumi·(d_w·d_x).
	VPBROADCASTW (SI), Y14
	VCVTPH2PS Y14, Z14
	VMULPS Z13, Z14, Z14
	VMULPS Z14, Z2, Z2
	VADDPS Z2, Z0, Z0
	// Row r0+1.
	VPBROADCASTW (SI)(R8*1), Y14
	VCVTPH2PS Y14, Z14
	VMULPS Z13, Z14, Z14
	VMULPS Z14, Z3, Z3
	VADDPS Z3, Z1, Z1
	ADDQ $18, SI
	ADDQ $128, BX
	ADDQ $320, DI
	ADDQ $320, DX
	DECQ CX
	JNZ  q40r2x16v
	MOVQ out+48(FP), DX
	STORE2
	VZEROUPPER
	RET

// DOT2X(wa, wb, acc0, acc1): DOT2 for signed Q8_0 weights: each broadcast
// byte w is turned into the unsigned w+128 (XOR 0x80, Z15) first; the
// 128·Σq this adds is taken off per block.
#define DOT2X(wa, wb, acc0, acc1) \
	VPBROADCASTD wa, Z10; \
	VPXORD Z15, Z10, Z10; \
	VPDPBUSD Z8, Z10, acc0; \
	VPBROADCASTD wb, Z11; \
	VPXORD Z15, Z11, Z11; \
	VPDPBUSD Z8, Z11, acc1

// func q8_0q8_0r2x16AVX512(w *byte, wstride int, ta, tb *byte, nb int, out *float32)
// Two Q8_0 rows against two tiles: Σ (w+128)·q − 16·(8·Σq) = Σ w·q
// exactly (any w, −128 too); then sum = fma(sumi, d_w·d_x, sum).
TEXT ·q8_0q8_0r2x16AVX512(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ ta+16(FP), DI
	MOVQ tb+24(FP), DX
	MOVQ nb+32(FP), CX
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z15
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
q80r2x16v:
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	TILES(64, Z8, Y8)
	DOT2X(2(SI), 2(SI)(R8*1), Z2, Z3)
	TILES(96, Z8, Y8)
	DOT2X(6(SI), 6(SI)(R8*1), Z4, Z5)
	TILES(128, Z8, Y8)
	DOT2X(10(SI), 10(SI)(R8*1), Z2, Z3)
	TILES(160, Z8, Y8)
	DOT2X(14(SI), 14(SI)(R8*1), Z4, Z5)
	TILES(192, Z8, Y8)
	DOT2X(18(SI), 18(SI)(R8*1), Z2, Z3)
	TILES(224, Z8, Y8)
	DOT2X(22(SI), 22(SI)(R8*1), Z4, Z5)
	TILES(256, Z8, Y8)
	DOT2X(26(SI), 26(SI)(R8*1), Z2, Z3)
	TILES(288, Z8, Y8)
	DOT2X(30(SI), 30(SI)(R8*1), Z4, Z5)
	// sumi = Σ (w+128)·q − 128·Σq.
	VPADDD Z4, Z2, Z2
	VPADDD Z5, Z3, Z3
	TILES(32, Z12, Y12)
	VPSLLD $4, Z12, Z12
	VPSUBD Z12, Z2, Z2
	VPSUBD Z12, Z3, Z3
	VCVTDQ2PS Z2, Z2
	VCVTDQ2PS Z3, Z3
	VMOVUPS (DI), Y13
	VINSERTF64X4 $1, (DX), Z13, Z13
	// Row r0: sum = fma(sumi, d_w·d_x, sum).
	VPBROADCASTW (SI), Y14
	VCVTPH2PS Y14, Z14
	VMULPS Z13, Z14, Z14
	VFMADD231PS Z14, Z2, Z0
	// Row r0+1.
	VPBROADCASTW (SI)(R8*1), Y14
	VCVTPH2PS Y14, Z14
	VMULPS Z13, Z14, Z14
	VFMADD231PS Z14, Z3, Z1
	ADDQ $34, SI
	ADDQ $320, DI
	ADDQ $320, DX
	DECQ CX
	JNZ  q80r2x16v
	MOVQ out+40(FP), DX
	STORE2
	VZEROUPPER
	RET

// func q4_Kq8_Kr2x16AVX512(u *byte, r0 int, ta, tb *byte, nb int, out *float32)
// Rows r0, r0+1 of four Q4_K rows prepared by prep4Q4_K (tile8k.go)
// against two Q8_K tiles. Per sub-block s the nibble·q sums of the eight
// chunks (even chunks into Z2/Z3, odd into Z4/Z5), times the sub-block's
// scale (VPMULLD: the sum may exceed int16 here), into isum (Z6, Z7);
// summs = Σ m·(sub-block sums of q) by VPMADDWD from the tile's int16
// pair sums; sum += (d_x·d)·isum − (d_x·dmin)·summs: the generic twin's
// float sequence. R11: rows' nibbles (u+32·r0) and scales at 1024(R11)
// onwards, SI: their mins (u+16·r0), R13: d and dmin (u+4·r0); R12/R14
// the two tiles; all advance by super-block.
TEXT ·q4_Kq8_Kr2x16AVX512(SB), NOSPLIT, $0-48
	MOVQ u+0(FP), R11
	MOVQ r0+8(FP), AX
	MOVQ ta+16(FP), R12
	MOVQ tb+24(FP), R14
	MOVQ nb+32(FP), CX
	LEAQ (R11)(AX*4), R13
	LEAQ (R11)(AX*8), SI
	LEAQ (SI)(AX*8), SI
	SHLQ $5, AX
	ADDQ AX, R11
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
q4kr2x16vsb:
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ R11, BX
	MOVQ R12, DI
	MOVQ R14, DX
	LEAQ 1024(R11), R10
	MOVQ $8, R9
q4kr2x16vsub:
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	TILES(160, Z8, Y8)
	DOT2(0(BX), 32(BX), Z2, Z3)
	TILES(192, Z8, Y8)
	DOT2(4(BX), 36(BX), Z4, Z5)
	TILES(224, Z8, Y8)
	DOT2(8(BX), 40(BX), Z2, Z3)
	TILES(256, Z8, Y8)
	DOT2(12(BX), 44(BX), Z4, Z5)
	TILES(288, Z8, Y8)
	DOT2(16(BX), 48(BX), Z2, Z3)
	TILES(320, Z8, Y8)
	DOT2(20(BX), 52(BX), Z4, Z5)
	TILES(352, Z8, Y8)
	DOT2(24(BX), 56(BX), Z2, Z3)
	TILES(384, Z8, Y8)
	DOT2(28(BX), 60(BX), Z4, Z5)
	VPADDD Z4, Z2, Z2
	VPADDD Z5, Z3, Z3
	// The scale dword holds sc twice (as int16); >>16 leaves sc.
	VPBROADCASTD 0(R10), Z10
	VPSRLD $16, Z10, Z10
	VPMULLD Z10, Z2, Z2
	VPADDD Z2, Z6, Z6
	VPBROADCASTD 32(R10), Z11
	VPSRLD $16, Z11, Z11
	VPMULLD Z11, Z3, Z3
	VPADDD Z3, Z7, Z7
	ADDQ $128, BX
	ADDQ $256, DI
	ADDQ $256, DX
	ADDQ $4, R10
	DECQ R9
	JNZ  q4kr2x16vsub
	// The tiles' int16 sub-block pair sums (Z16..Z19) and d_x (Z20).
	MOVQ R12, DI
	MOVQ R14, DX
	TILES(32, Z16, Y16)
	TILES(64, Z17, Y17)
	TILES(96, Z18, Y18)
	TILES(128, Z19, Y19)
	VMOVUPS (DI), Y20
	VINSERTF64X4 $1, (DX), Z20, Z20
	// Row r0: summs (Z2) = Σ mins·bsums.
	VPBROADCASTD 1152(SI), Z10
	VPMADDWD Z16, Z10, Z2
	VPBROADCASTD 1156(SI), Z10
	VPMADDWD Z17, Z10, Z10
	VPADDD Z10, Z2, Z2
	VPBROADCASTD 1160(SI), Z10
	VPMADDWD Z18, Z10, Z10
	VPADDD Z10, Z2, Z2
	VPBROADCASTD 1164(SI), Z10
	VPMADDWD Z19, Z10, Z10
	VPADDD Z10, Z2, Z2
	// sum += (d_x·d)·isum − (d_x·dmin)·summs.
	VCVTDQ2PS Z6, Z6
	VCVTDQ2PS Z2, Z2
	VBROADCASTSS 1216(R13), Z10
	VMULPS Z20, Z10, Z10
	VMULPS Z10, Z6, Z6
	VBROADCASTSS 1232(R13), Z10
	VMULPS Z20, Z10, Z10
	VMULPS Z10, Z2, Z2
	VSUBPS Z2, Z6, Z6
	VADDPS Z6, Z0, Z0
	// Row r0+1.
	VPBROADCASTD 1168(SI), Z10
	VPMADDWD Z16, Z10, Z3
	VPBROADCASTD 1172(SI), Z10
	VPMADDWD Z17, Z10, Z10
	VPADDD Z10, Z3, Z3
	VPBROADCASTD 1176(SI), Z10
	VPMADDWD Z18, Z10, Z10
	VPADDD Z10, Z3, Z3
	VPBROADCASTD 1180(SI), Z10
	VPMADDWD Z19, Z10, Z10
	VPADDD Z10, Z3, Z3
	VCVTDQ2PS Z7, Z7
	VCVTDQ2PS Z3, Z3
	VBROADCASTSS 1220(R13), Z10
	VMULPS Z20, Z10, Z10
	VMULPS Z10, Z7, Z7
	VBROADCASTSS 1236(R13), Z10
	VMULPS Z20, Z10, Z10
	VMULPS Z10, Z3, Z3
	VSUBPS Z3, Z7, Z7
	VADDPS Z7, Z1, Z1
	ADDQ $1248, R11
	ADDQ $1248, R13
	ADDQ $1248, SI
	ADDQ $2208, R12
	ADDQ $2208, R14
	DECQ CX
	JNZ  q4kr2x16vsb
	MOVQ out+40(FP), DX
	STORE2
	VZEROUPPER
	RET

// Four weight rows against two eight-token tiles (tile8Kernel.quad): the
// pair kernels' arithmetic for all four rows of a quad in one pass, so
// each chunk of the two tiles is read (from L2, where the prefill keeps
// its block of tiles) once for four rows instead of twice. Output layout:
// row r's results for ta at out[8r:8r+8], for tb at out[32+8r:32+8r+8].
// Registers: Z0..Z3 the rows' running sums, Z4..Z7 and Z16..Z19 their
// even- and odd-chunk integer sums, Z8 a chunk of both tiles, Z9..Z12 the
// rows' broadcast weight bytes.

// DOT4(w0, w1, w2, w3, a0, a1, a2, a3): the chunk in Z8 against the four
// unsigned bytes of each row (at w0..w3), into a0..a3.
#define DOT4(w0, w1, w2, w3, a0, a1, a2, a3) \
	VPBROADCASTD w0, Z9; \
	VPDPBUSD Z8, Z9, a0; \
	VPBROADCASTD w1, Z10; \
	VPDPBUSD Z8, Z10, a1; \
	VPBROADCASTD w2, Z11; \
	VPDPBUSD Z8, Z11, a2; \
	VPBROADCASTD w3, Z12; \
	VPDPBUSD Z8, Z12, a3

#define ZERO_ACC4 \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19

// SUM_ACC4: the even- and odd-chunk sums added (Z4..Z7).
#define SUM_ACC4 \
	VPADDD Z16, Z4, Z4; \
	VPADDD Z17, Z5, Z5; \
	VPADDD Z18, Z6, Z6; \
	VPADDD Z19, Z7, Z7

// STORE4: Z0..Z3 to the output layout at DX.
#define STORE4 \
	VMOVUPS Y0, (DX); \
	VEXTRACTF64X4 $1, Z0, 128(DX); \
	VMOVUPS Y1, 32(DX); \
	VEXTRACTF64X4 $1, Z1, 160(DX); \
	VMOVUPS Y2, 64(DX); \
	VEXTRACTF64X4 $1, Z2, 192(DX); \
	VMOVUPS Y3, 96(DX); \
	VEXTRACTF64X4 $1, Z3, 224(DX)

// QUAD_BLOCK: one block of four prepared rows (BX: 128 unsigned bytes,
// row r at 32r) against both tiles (DI, DX): Z4..Z7 the rows' exact int32
// sums (ZERO_ACC4, eight TILES + DOT4 steps over two accumulator sets,
// SUM_ACC4).
#define QUAD_BLOCK \
	ZERO_ACC4; \
	TILES(64, Z8, Y8); \
	DOT4(0(BX), 32(BX), 64(BX), 96(BX), Z4, Z5, Z6, Z7); \
	TILES(96, Z8, Y8); \
	DOT4(4(BX), 36(BX), 68(BX), 100(BX), Z16, Z17, Z18, Z19); \
	TILES(128, Z8, Y8); \
	DOT4(8(BX), 40(BX), 72(BX), 104(BX), Z4, Z5, Z6, Z7); \
	TILES(160, Z8, Y8); \
	DOT4(12(BX), 44(BX), 76(BX), 108(BX), Z16, Z17, Z18, Z19); \
	TILES(192, Z8, Y8); \
	DOT4(16(BX), 48(BX), 80(BX), 112(BX), Z4, Z5, Z6, Z7); \
	TILES(224, Z8, Y8); \
	DOT4(20(BX), 52(BX), 84(BX), 116(BX), Z16, Z17, Z18, Z19); \
	TILES(256, Z8, Y8); \
	DOT4(24(BX), 56(BX), 88(BX), 120(BX), Z4, Z5, Z6, Z7); \
	TILES(288, Z8, Y8); \
	DOT4(28(BX), 60(BX), 92(BX), 124(BX), Z16, Z17, Z18, Z19); \
	SUM_ACC4

// Q40_ROWS(d, acc, sum): sum += (acc − 8·Σq)·(d_w·d_x), d_w the float32
// at d (the preparation's, converted from the row's f16 once); Z13 holds
// the tokens' d_x, Z14 their 8·Σq; Z15 scratch.
#define Q40_ROWS(d, acc, sum) \
	VPSUBD Z14, acc, acc; \
	VCVTDQ2PS acc, acc; \
	VBROADCASTSS d, Z15; \
	VMULPS Z13, Z15, Z15; \
	VMULPS Z15, acc, acc; \
	VADDPS acc, sum, sum

// func q4_0q8_0r4x16sAVX512(w *byte, wstride int, u, ta, tb *byte, nb int, out *float32)
// Four Q4_0 rows against two tiles, per lane the pair kernel's sequence:
// the rows prepared in u by unpack4Q4_0S (unpack4Q4_0's nibbles, 128
// bytes a block, then a tail of 16 bytes a block: the four d_w as
// float32), each scale one broadcast load (w is not read).
TEXT ·q4_0q8_0r4x16sAVX512(SB), NOSPLIT, $0-56
	MOVQ u+16(FP), BX
	MOVQ ta+24(FP), DI
	MOVQ tb+32(FP), DX
	MOVQ nb+40(FP), CX
	MOVQ CX, R10
	SHLQ $7, R10
	ADDQ BX, R10 // the scales: u + 128·nb
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	PCALIGN $64
q40r4x16sv:
	QUAD_BLOCK
	TILES(32, Z14, Y14)
	VMOVUPS (DI), Y13
	VINSERTF64X4 $1, (DX), Z13, Z13
	Q40_ROWS(0(R10), Z4, Z0)
	Q40_ROWS(4(R10), Z5, Z1)
	Q40_ROWS(8(R10), Z6, Z2)
	Q40_ROWS(12(R10), Z7, Z3)
	ADDQ $128, BX
	ADDQ $16, R10
	ADDQ $320, DI
	ADDQ $320, DX
	DECQ CX
	JNZ  q40r4x16sv
	MOVQ out+48(FP), DX
	STORE4
	VZEROUPPER
	RET

// func scales4Q4_0AVX512(w *byte, wstride int, s *byte, nb int)
// The d_w of four Q4_0 rows (wstride apart) as float32, 16 bytes a block:
// the tail of unpack4Q4_0S.
TEXT ·scales4Q4_0AVX512(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ s+16(FP), DI
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
s4q40loop:
	// The four f16 gathered in a general register (each block its own
	// chain, not one vector register's inserts block after block).
	MOVWQZX (SI), AX
	MOVWQZX (SI)(R8*1), BX
	SHLQ $16, BX
	ORQ BX, AX
	MOVWQZX (SI)(R8*2), DX
	SHLQ $32, DX
	ORQ DX, AX
	MOVWQZX (SI)(R9*1), R11
	SHLQ $48, R11
	ORQ R11, AX
	VMOVQ AX, X4
	VCVTPH2PS X4, X4
	VMOVUPS X4, (DI)
	ADDQ $18, SI
	ADDQ $16, DI
	DECQ CX
	JNZ  s4q40loop
	RET

// Q80_ROWP(d, acc, sum): sum = fma(acc − 128·Σq, d_w·d_x, sum), d_w the
// float32 at d (the preparation's, converted from the row's f16 once);
// Z13 d_x, Z14 128·Σq; Z20 scratch.
#define Q80_ROWP(d, acc, sum) \
	VPSUBD Z14, acc, acc; \
	VCVTDQ2PS acc, acc; \
	VBROADCASTSS d, Z20; \
	VMULPS Z13, Z20, Z20; \
	VFMADD231PS Z20, acc, sum

// func q8_0q8_0r4x16pAVX512(w *byte, wstride int, u, ta, tb *byte, nb int, out *float32)
// Four Q8_0 rows against two tiles, per lane the pair kernel's sequence
// (sum = fma(sumi, d_w·d_x, sum)): the rows prepared in u by
// bias4Q8_0AVX512 (144 bytes a block: each quant plus 128 as an unsigned
// byte, row r at 32r, then the four d_w as float32), so that each
// broadcast goes to VPDPBUSD as it is (DOT4; 128·Σq comes off) and each
// scale is one broadcast load (w is not read).
TEXT ·q8_0q8_0r4x16pAVX512(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ u+16(FP), BX
	MOVQ ta+24(FP), DI
	MOVQ tb+32(FP), DX
	MOVQ nb+40(FP), CX
	LEAQ (R8)(R8*2), R9
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	PCALIGN $64
q80r4x16pv:
	QUAD_BLOCK
	TILES(32, Z14, Y14)
	VPSLLD $4, Z14, Z14
	VMOVUPS (DI), Y13
	VINSERTF64X4 $1, (DX), Z13, Z13
	Q80_ROWP(128(BX), Z4, Z0)
	Q80_ROWP(132(BX), Z5, Z1)
	Q80_ROWP(136(BX), Z6, Z2)
	Q80_ROWP(140(BX), Z7, Z3)
	ADDQ $144, BX
	ADDQ $320, DI
	ADDQ $320, DX
	DECQ CX
	JNZ  q80r4x16pv
	MOVQ out+48(FP), DX
	STORE4
	VZEROUPPER
	RET

// OCT_C(c, off, tz, ty, a0..a7): chunk c (bytes c..c+3 of each row's 32)
// of both tiles (at off; into tz) against eight prepared rows (rows 0..3
// at BX, 4..7 at SI, 32 bytes apart), into a0..a7 (Z11..Z13, Z15 the
// broadcasts).
#define OCT_C(c, off, tz, ty, a0, a1, a2, a3, a4, a5, a6, a7) \
	TILES(off, tz, ty); \
	VPBROADCASTD c(BX), Z11; \
	VPDPBUSD tz, Z11, a0; \
	VPBROADCASTD 32+c(BX), Z12; \
	VPDPBUSD tz, Z12, a1; \
	VPBROADCASTD 64+c(BX), Z13; \
	VPDPBUSD tz, Z13, a2; \
	VPBROADCASTD 96+c(BX), Z15; \
	VPDPBUSD tz, Z15, a3; \
	VPBROADCASTD c(SI), Z11; \
	VPDPBUSD tz, Z11, a4; \
	VPBROADCASTD 32+c(SI), Z12; \
	VPDPBUSD tz, Z12, a5; \
	VPBROADCASTD 64+c(SI), Z13; \
	VPDPBUSD tz, Z13, a6; \
	VPBROADCASTD 96+c(SI), Z15; \
	VPDPBUSD tz, Z15, a7

// OCT_ROW(d, acc, sum): sum = fma(acc, d_w·d_x, sum), acc the row's exact
// Σ w·q (started at −128·Σq); Z10 d_x, Z12 scratch.
#define OCT_ROW(d, acc, sum) \
	VCVTDQ2PS acc, acc; \
	VBROADCASTSS d, Z12; \
	VMULPS Z10, Z12, Z12; \
	VFMADD231PS Z12, acc, sum

// OCT_ZERO: the eight rows' running sums (Z24..Z31) and Z14 zeroed.
#define OCT_ZERO \
	VPXORD Z24, Z24, Z24; \
	VPXORD Z25, Z25, Z25; \
	VPXORD Z26, Z26, Z26; \
	VPXORD Z27, Z27, Z27; \
	VPXORD Z28, Z28, Z28; \
	VPXORD Z29, Z29, Z29; \
	VPXORD Z30, Z30, Z30; \
	VPXORD Z31, Z31, Z31; \
	VPXORD Z14, Z14, Z14

// OCT_DOTS: one block of the eight prepared rows (BX: rows 0..3, SI: rows
// 4..7) against both tiles (DI, DX), into Z0..Z7: each row's even-chunk
// accumulator starts at Z11 (the block's −c·Σq), its odd one at zero, the
// eight chunks by OCT_C, the two added; then the tiles' d_x in Z10.
#define OCT_DOTS \
	VMOVDQA64 Z11, Z0; \
	VMOVDQA64 Z11, Z1; \
	VMOVDQA64 Z11, Z2; \
	VMOVDQA64 Z11, Z3; \
	VMOVDQA64 Z11, Z4; \
	VMOVDQA64 Z11, Z5; \
	VMOVDQA64 Z11, Z6; \
	VMOVDQA64 Z11, Z7; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23; \
	OCT_C(0, 64, Z8, Y8, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7); \
	OCT_C(4, 96, Z9, Y9, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23); \
	OCT_C(8, 128, Z8, Y8, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7); \
	OCT_C(12, 160, Z9, Y9, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23); \
	OCT_C(16, 192, Z8, Y8, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7); \
	OCT_C(20, 224, Z9, Y9, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23); \
	OCT_C(24, 256, Z8, Y8, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7); \
	OCT_C(28, 288, Z9, Y9, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23); \
	VPADDD Z16, Z0, Z0; \
	VPADDD Z17, Z1, Z1; \
	VPADDD Z18, Z2, Z2; \
	VPADDD Z19, Z3, Z3; \
	VPADDD Z20, Z4, Z4; \
	VPADDD Z21, Z5, Z5; \
	VPADDD Z22, Z6, Z6; \
	VPADDD Z23, Z7, Z7; \
	VMOVUPS (DI), Y10; \
	VINSERTF64X4 $1, (DX), Z10, Z10

// OCT_STORE4(z0..z3): four rows' sums (Z registers, their Y halves
// named after them) to the quad layout at DX.
#define OCT_STORE4(z0, y0, z1, y1, z2, y2, z3, y3) \
	OCT_STORE(z0, y0, 0); \
	OCT_STORE(z1, y1, 32); \
	OCT_STORE(z2, y2, 64); \
	OCT_STORE(z3, y3, 96)

// OCT_ROW40(d, acc, sum): Q40_ROWS for an accumulator that started at
// −8·Σq: sum += float32(acc)·(d_w·d_x), the product rounded; Z10 d_x, Z12
// scratch.
#define OCT_ROW40(d, acc, sum) \
	VCVTDQ2PS acc, acc; \
	VBROADCASTSS d, Z12; \
	VMULPS Z10, Z12, Z12; \
	VMULPS Z12, acc, acc; \
	VADDPS acc, sum, sum

// OCT_STORE(z, o): row sums z (lanes 0..7 tile a, 8..15 tile b) to the
// quad output layout at o(DX) (row r of a quad: tile a at 32r, b at 128+32r).
#define OCT_STORE(z, y, o) \
	VMOVUPS y, o(DX); \
	VEXTRACTF64X4 $1, z, 128+o(DX)

// func q8_0q8_0r8x16pAVX512(u0, u1, ta, tb *byte, nb int, out0, out1 *float32)
// Two row quads prepared by bias4Q8_0AVX512 (u0: rows 0..3, u1: rows
// 4..7) against two tiles: q8_0q8_0r4x16pAVX512's sums, bit for bit, for
// both quads in one pass (out0: quad u0's 64 results in the quad layout,
// out1: u1's). Each tile chunk is loaded once for eight rows, and the
// blocks' sixteen accumulator chains (even and odd chunks) keep both
// VPDPBUSD ports busy where the quad's eight left them waiting: ~15 %
// faster than two quad calls (bench/results/2026-12-02-s12-cpu-oct). Each
// row's even accumulator starts at −128·Σq (the biased quants' excess,
// taken off before instead of after: the same exact int32).
TEXT ·q8_0q8_0r8x16pAVX512(SB), NOSPLIT, $0-56
	OCT_ARGS
	OCT_ZERO
	PCALIGN $64
q80r8x16pv:
	TILES(32, Z11, Y11)
	VPSLLD $4, Z11, Z11
	VPSUBD Z11, Z14, Z11
	OCT_DOTS
	OCT_ROW(128(BX), Z0, Z24)
	OCT_ROW(132(BX), Z1, Z25)
	OCT_ROW(136(BX), Z2, Z26)
	OCT_ROW(140(BX), Z3, Z27)
	OCT_ROW(128(SI), Z4, Z28)
	OCT_ROW(132(SI), Z5, Z29)
	OCT_ROW(136(SI), Z6, Z30)
	OCT_ROW(140(SI), Z7, Z31)
	ADDQ $144, BX
	ADDQ $144, SI
	ADDQ $320, DI
	ADDQ $320, DX
	DECQ CX
	JNZ  q80r8x16pv
	OCT_RET

// func q4_0q8_0r8x16sAVX512(u0, u1, ta, tb *byte, nb int, out0, out1 *float32)
// Two row quads prepared by unpack4Q4_0S (u0: rows 0..3, u1: rows 4..7;
// the scales in each one's tail) against two tiles:
// q4_0q8_0r4x16sAVX512's sums, bit for bit, for both quads in one pass,
// as q8_0q8_0r8x16pAVX512 does for Q8_0 (OCT_C; each row's even
// accumulator starts at −8·Σq); per lane sum += (sumi·(d_w·d_x)) with the
// product rounded, as Q40_ROWS. R10, AX: the two quads' scales.
TEXT ·q4_0q8_0r8x16sAVX512(SB), NOSPLIT, $0-56
	OCT_ARGS
	MOVQ CX, R10
	SHLQ $7, R10
	LEAQ (SI)(R10*1), AX // u1 + 128·nb
	ADDQ BX, R10         // u0 + 128·nb
	OCT_ZERO
	PCALIGN $64
q40r8x16sv:
	TILES(32, Z11, Y11)
	VPSUBD Z11, Z14, Z11
	OCT_DOTS
	OCT_ROW40(0(R10), Z0, Z24)
	OCT_ROW40(4(R10), Z1, Z25)
	OCT_ROW40(8(R10), Z2, Z26)
	OCT_ROW40(12(R10), Z3, Z27)
	OCT_ROW40(0(AX), Z4, Z28)
	OCT_ROW40(4(AX), Z5, Z29)
	OCT_ROW40(8(AX), Z6, Z30)
	OCT_ROW40(12(AX), Z7, Z31)
	ADDQ $128, BX
	ADDQ $128, SI
	ADDQ $16, R10
	ADDQ $16, AX
	ADDQ $320, DI
	ADDQ $320, DX
	DECQ CX
	JNZ  q40r8x16sv
	OCT_RET

// func bias4Q8_0AVX512(w *byte, wstride int, u *byte, nb int)
// The preparation of q8_0q8_0r4x16pAVX512, 144 bytes a block: the quants
// of four Q8_0 rows (wstride apart) plus 128 (XOR 0x80) as unsigned bytes,
// row r at 32r, then the rows' d_w as float32.
TEXT ·bias4Q8_0AVX512(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ u+16(FP), DI
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	MOVL $0x80808080, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
b4q80loop:
	VPXOR 2(SI), Y15, Y0
	VPXOR 2(SI)(R8*1), Y15, Y1
	VPXOR 2(SI)(R8*2), Y15, Y2
	VPXOR 2(SI)(R9*1), Y15, Y3
	VMOVDQU Y0, (DI)
	VMOVDQU Y1, 32(DI)
	VMOVDQU Y2, 64(DI)
	VMOVDQU Y3, 96(DI)
	MOVWQZX (SI), AX // the four f16 gathered in a general register
	MOVWQZX (SI)(R8*1), BX
	SHLQ $16, BX
	ORQ BX, AX
	MOVWQZX (SI)(R8*2), DX
	SHLQ $32, DX
	ORQ DX, AX
	MOVWQZX (SI)(R9*1), R11
	SHLQ $48, R11
	ORQ R11, AX
	VMOVQ AX, X4
	VCVTPH2PS X4, X4
	VMOVUPS X4, 128(DI)
	ADDQ $34, SI
	ADDQ $144, DI
	DECQ CX
	JNZ  b4q80loop
	VZEROUPPER
	RET

// Q4K_SCALE(off, acc, isum): isum += sc·acc, sc the scale of the dword at
// off (sc twice as int16; >>16 leaves sc); Z9 scratch.
#define Q4K_SCALE(off, acc, isum) \
	VPBROADCASTD off, Z9; \
	VPSRLD $16, Z9, Z9; \
	VPMULLD Z9, acc, acc; \
	VPADDD acc, isum, isum

// Q4K_MINS(m0, m1, m2, m3, dst): dst = Σ mins·(tile sub-block sums) for
// the row whose four dwords of min pairs are at m0..m3 (Z24..Z27 the
// tiles' pair sums of the same sub-blocks).
#define Q4K_MINS(m0, m1, m2, m3, dst) \
	VPBROADCASTD m0, Z9; \
	VPMADDWD Z24, Z9, dst; \
	VPBROADCASTD m1, Z9; \
	VPMADDWD Z25, Z9, Z9; \
	VPADDD Z9, dst, dst; \
	VPBROADCASTD m2, Z9; \
	VPMADDWD Z26, Z9, Z9; \
	VPADDD Z9, dst, dst; \
	VPBROADCASTD m3, Z9; \
	VPMADDWD Z27, Z9, Z9; \
	VPADDD Z9, dst, dst

// Q4K_ROW4(d, dmin, isum, summs, sum): sum += (d_x·d)·isum − (d_x·dmin)·summs
// (Z28: d_x; Z9 scratch).
#define Q4K_ROW4(d, dmin, isum, summs, sum) \
	VCVTDQ2PS isum, isum; \
	VCVTDQ2PS summs, summs; \
	VBROADCASTSS d, Z9; \
	VMULPS Z28, Z9, Z9; \
	VMULPS Z9, isum, isum; \
	VBROADCASTSS dmin, Z9; \
	VMULPS Z28, Z9, Z9; \
	VMULPS Z9, summs, summs; \
	VSUBPS summs, isum, isum; \
	VADDPS isum, sum, sum

// func q4_Kq8_Kr4x16AVX512(u *byte, ta, tb *byte, nb int, out *float32)
// Four Q4_K rows prepared by prep4Q4_K against two Q8_K tiles; per lane
// the pair kernel's sequence. R11: the prepared super-block (nibbles of
// sub-block s, row r at 128s+32r; scales at 1024+32r+4s; mins at
// 1152+16r; d, dmin at 1216+4r, 1232+4r); R12, R14 the tiles. Z20..Z23:
// the rows' isum.
TEXT ·q4_Kq8_Kr4x16AVX512(SB), NOSPLIT, $0-40
	MOVQ u+0(FP), R11
	MOVQ ta+8(FP), R12
	MOVQ tb+16(FP), R14
	MOVQ nb+24(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	PCALIGN $64
q4kr4x16vsb:
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	MOVQ R11, BX
	MOVQ R12, DI
	MOVQ R14, DX
	LEAQ 1024(R11), R10
	MOVQ $8, R9
q4kr4x16vsub:
	ZERO_ACC4
	TILES(160, Z8, Y8)
	DOT4(0(BX), 32(BX), 64(BX), 96(BX), Z4, Z5, Z6, Z7)
	TILES(192, Z8, Y8)
	DOT4(4(BX), 36(BX), 68(BX), 100(BX), Z16, Z17, Z18, Z19)
	TILES(224, Z8, Y8)
	DOT4(8(BX), 40(BX), 72(BX), 104(BX), Z4, Z5, Z6, Z7)
	TILES(256, Z8, Y8)
	DOT4(12(BX), 44(BX), 76(BX), 108(BX), Z16, Z17, Z18, Z19)
	TILES(288, Z8, Y8)
	DOT4(16(BX), 48(BX), 80(BX), 112(BX), Z4, Z5, Z6, Z7)
	TILES(320, Z8, Y8)
	DOT4(20(BX), 52(BX), 84(BX), 116(BX), Z16, Z17, Z18, Z19)
	TILES(352, Z8, Y8)
	DOT4(24(BX), 56(BX), 88(BX), 120(BX), Z4, Z5, Z6, Z7)
	TILES(384, Z8, Y8)
	DOT4(28(BX), 60(BX), 92(BX), 124(BX), Z16, Z17, Z18, Z19)
	SUM_ACC4
	Q4K_SCALE(0(R10), Z4, Z20)
	Q4K_SCALE(32(R10), Z5, Z21)
	Q4K_SCALE(64(R10), Z6, Z22)
	Q4K_SCALE(96(R10), Z7, Z23)
	ADDQ $128, BX
	ADDQ $256, DI
	ADDQ $256, DX
	ADDQ $4, R10
	DECQ R9
	JNZ  q4kr4x16vsub
	// The tiles' int16 sub-block pair sums (Z24..Z27) and d_x (Z28).
	MOVQ R12, DI
	MOVQ R14, DX
	TILES(32, Z24, Y24)
	TILES(64, Z25, Y25)
	TILES(96, Z26, Y26)
	TILES(128, Z27, Y27)
	VMOVUPS (DI), Y28
	VINSERTF64X4 $1, (DX), Z28, Z28
	Q4K_MINS(1152(R11), 1156(R11), 1160(R11), 1164(R11), Z4)
	Q4K_MINS(1168(R11), 1172(R11), 1176(R11), 1180(R11), Z5)
	Q4K_MINS(1184(R11), 1188(R11), 1192(R11), 1196(R11), Z6)
	Q4K_MINS(1200(R11), 1204(R11), 1208(R11), 1212(R11), Z7)
	Q4K_ROW4(1216(R11), 1232(R11), Z20, Z4, Z0)
	Q4K_ROW4(1220(R11), 1236(R11), Z21, Z5, Z1)
	Q4K_ROW4(1224(R11), 1240(R11), Z22, Z6, Z2)
	Q4K_ROW4(1228(R11), 1244(R11), Z23, Z7, Z3)
	ADDQ $1248, R11
	ADDQ $2208, R12
	ADDQ $2208, R14
	DECQ CX
	JNZ  q4kr4x16vsb
	MOVQ out+32(FP), DX
	STORE4
	VZEROUPPER
	RET

// OCTK_C(c, off, tz, ty, a0..a7): OCT_C for the nibbles of one Q4_K
// sub-block (rows 0..3 at BX, 4..7 at SI, 32 bytes apart).
#define OCTK_C(c, off, tz, ty, a0, a1, a2, a3, a4, a5, a6, a7) \
	OCT_C(c, off, tz, ty, a0, a1, a2, a3, a4, a5, a6, a7)

// Q4K_SCALE8(off, even, odd, isum): isum += sc·(even + odd), sc the scale
// of the dword at off (sc twice as int16). Each of the two sums of 16
// nibble·quant products fits int16 (|·| ≤ 16·15·128 = 30720), so they go
// side by side into one dword (even in the low half, odd in the high:
// VPTERNLOGD with the 0x0000FFFF mask in Z14) and one VPMADDWD against
// [sc | sc] gives sc·even + sc·odd exactly, where an add and a VPMULLD (two
// uops, latency 10) did (Z10 scratch; odd clobbered).
#define Q4K_SCALE8(off, even, odd, isum) \
	VPSLLD $16, odd, odd; \
	VPTERNLOGD $0xEC, Z14, odd, even; \
	VPBROADCASTD off, Z10; \
	VPMADDWD Z10, even, even; \
	VPADDD even, isum, isum

// Q4K_MINS8(m0..m3, dst): Q4K_MINS against the tiles' pair sums in
// Z16..Z19 (Z10 scratch).
#define Q4K_MINS8(m0, m1, m2, m3, dst) \
	VPBROADCASTD m0, Z10; \
	VPMADDWD Z16, Z10, dst; \
	VPBROADCASTD m1, Z10; \
	VPMADDWD Z17, Z10, Z10; \
	VPADDD Z10, dst, dst; \
	VPBROADCASTD m2, Z10; \
	VPMADDWD Z18, Z10, Z10; \
	VPADDD Z10, dst, dst; \
	VPBROADCASTD m3, Z10; \
	VPMADDWD Z19, Z10, Z10; \
	VPADDD Z10, dst, dst

// Q4K_ROW8(d, dmin, isum, summs, o, out): Q4K_ROW4 (Z20 d_x, Z22
// scratch) on the row's running sums kept at o(out) (Z21).
#define Q4K_ROW8(d, dmin, isum, summs, o, out) \
	VMOVUPS o(out), Z21; \
	VCVTDQ2PS isum, isum; \
	VCVTDQ2PS summs, summs; \
	VBROADCASTSS d, Z22; \
	VMULPS Z20, Z22, Z22; \
	VMULPS Z22, isum, isum; \
	VBROADCASTSS dmin, Z22; \
	VMULPS Z20, Z22, Z22; \
	VMULPS Z22, summs, summs; \
	VSUBPS summs, isum, isum; \
	VADDPS isum, Z21, Z21; \
	VMOVUPS Z21, o(out)

// QUAD_LAYOUT(out): the four rows' sums kept at out (row r's sixteen
// lanes at 64r) rearranged to the quad layout in place (clobbers Z0..Z3,
// DX).
#define QUAD_LAYOUT(out) \
	MOVQ out, DX; \
	VMOVUPS 0(DX), Z0; \
	VMOVUPS 64(DX), Z1; \
	VMOVUPS 128(DX), Z2; \
	VMOVUPS 192(DX), Z3; \
	STORE4

// func q4_Kq8_Kr8x16AVX512(u0, u1, ta, tb *byte, nb int, out0, out1 *float32)
// Two row quads prepared by prep4Q4_K (u0: rows 0..3, u1: rows 4..7)
// against two Q8_K tiles: q4_Kq8_Kr4x16AVX512's sums, bit for bit, for
// both quads in one pass (each quad's 64 results in the quad layout at
// out0, out1), as q8_0q8_0r8x16pAVX512 does for Q8_0: each tile chunk
// loaded once for eight rows, sixteen accumulator chains a sub-block.
// The rows' float sums live in out0/out1 (row r's lanes at 64r) between
// super-blocks, for want of registers, and take the quad layout at the
// end. R11, R13: the prepared super-blocks; R12, R14: the tiles; R8:
// out0; Z24..Z31: the rows' isum.
TEXT ·q4_Kq8_Kr8x16AVX512(SB), NOSPLIT, $0-56
	MOVQ u0+0(FP), R11
	MOVQ u1+8(FP), R13
	MOVQ ta+16(FP), R12
	MOVQ tb+24(FP), R14
	MOVQ nb+32(FP), CX
	MOVQ out0+40(FP), R8
	MOVQ out1+48(FP), DI
	MOVL $0xFFFF, AX
	VPBROADCASTD AX, Z14
	VPXORD Z0, Z0, Z0
	VMOVUPS Z0, 0(R8)
	VMOVUPS Z0, 64(R8)
	VMOVUPS Z0, 128(R8)
	VMOVUPS Z0, 192(R8)
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z0, 64(DI)
	VMOVUPS Z0, 128(DI)
	VMOVUPS Z0, 192(DI)
	PCALIGN $64
q4kr8x16vsb:
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31
	MOVQ R11, BX
	MOVQ R13, SI
	MOVQ R12, DI
	MOVQ R14, DX
	LEAQ 1024(R11), R10
	LEAQ 1024(R13), AX
	MOVQ $8, R9
q4kr8x16vsub:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	OCTK_C(0, 160, Z8, Y8, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	OCTK_C(4, 192, Z9, Y9, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	OCTK_C(8, 224, Z8, Y8, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	OCTK_C(12, 256, Z9, Y9, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	OCTK_C(16, 288, Z8, Y8, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	OCTK_C(20, 320, Z9, Y9, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	OCTK_C(24, 352, Z8, Y8, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	OCTK_C(28, 384, Z9, Y9, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	Q4K_SCALE8(0(R10), Z0, Z16, Z24)
	Q4K_SCALE8(32(R10), Z1, Z17, Z25)
	Q4K_SCALE8(64(R10), Z2, Z18, Z26)
	Q4K_SCALE8(96(R10), Z3, Z19, Z27)
	Q4K_SCALE8(0(AX), Z4, Z20, Z28)
	Q4K_SCALE8(32(AX), Z5, Z21, Z29)
	Q4K_SCALE8(64(AX), Z6, Z22, Z30)
	Q4K_SCALE8(96(AX), Z7, Z23, Z31)
	ADDQ $128, BX
	ADDQ $128, SI
	ADDQ $256, DI
	ADDQ $256, DX
	ADDQ $4, R10
	ADDQ $4, AX
	DECQ R9
	JNZ  q4kr8x16vsub
	// The tiles' int16 sub-block pair sums (Z16..Z19) and d_x (Z20).
	MOVQ R12, DI
	MOVQ R14, DX
	TILES(32, Z16, Y16)
	TILES(64, Z17, Y17)
	TILES(96, Z18, Y18)
	TILES(128, Z19, Y19)
	VMOVUPS (DI), Y20
	VINSERTF64X4 $1, (DX), Z20, Z20
	Q4K_MINS8(1152(R11), 1156(R11), 1160(R11), 1164(R11), Z0)
	Q4K_MINS8(1168(R11), 1172(R11), 1176(R11), 1180(R11), Z1)
	Q4K_MINS8(1184(R11), 1188(R11), 1192(R11), 1196(R11), Z2)
	Q4K_MINS8(1200(R11), 1204(R11), 1208(R11), 1212(R11), Z3)
	Q4K_MINS8(1152(R13), 1156(R13), 1160(R13), 1164(R13), Z4)
	Q4K_MINS8(1168(R13), 1172(R13), 1176(R13), 1180(R13), Z5)
	Q4K_MINS8(1184(R13), 1188(R13), 1192(R13), 1196(R13), Z6)
	Q4K_MINS8(1200(R13), 1204(R13), 1208(R13), 1212(R13), Z7)
	Q4K_ROW8(1216(R11), 1232(R11), Z24, Z0, 0, R8)
	Q4K_ROW8(1220(R11), 1236(R11), Z25, Z1, 64, R8)
	Q4K_ROW8(1224(R11), 1240(R11), Z26, Z2, 128, R8)
	Q4K_ROW8(1228(R11), 1244(R11), Z27, Z3, 192, R8)
	MOVQ out1+48(FP), DI
	Q4K_ROW8(1216(R13), 1232(R13), Z28, Z4, 0, DI)
	Q4K_ROW8(1220(R13), 1236(R13), Z29, Z5, 64, DI)
	Q4K_ROW8(1224(R13), 1240(R13), Z30, Z6, 128, DI)
	Q4K_ROW8(1228(R13), 1244(R13), Z31, Z7, 192, DI)
	ADDQ $1248, R11
	ADDQ $1248, R13
	ADDQ $2208, R12
	ADDQ $2208, R14
	DECQ CX
	JNZ  q4kr8x16vsb
	QUAD_LAYOUT(R8)
	QUAD_LAYOUT(out1+48(FP))
	VZEROUPPER
	RET

// ---------------------------------------------------------------------
// Q6_K: four prepared rows against two tiles (tile8q6k.go's layouts and
// arithmetic, q6_Kq8_Kr4x8AVX2's sequence with both tiles' eight tokens
// in the two halves of each ZMM).
// ---------------------------------------------------------------------

// Q6Z_CHUNK(toff): Z12 = tile a's chunk at toff(DI) | tile b's at toff(DX).
#define Q6Z_CHUNK(toff) \
	VMOVDQU64 toff(DI), Y12; \
	VINSERTI64X4 $1, toff(DX), Z12, Z12

// Q6Z_FIRST: Z8..Z11 = the int16 pair sums of rows 0..3 (weight bytes woff
// of the sub-block's 32 a row, rows 32 bytes apart at BX) against the
// chunk at toff.
#define Q6Z_FIRST(toff, woff) \
	Q6Z_CHUNK(toff); \
	VPBROADCASTD woff(BX), Z13; \
	VPMADDUBSW Z13, Z12, Z8; \
	VPBROADCASTD woff+32(BX), Z13; \
	VPMADDUBSW Z13, Z12, Z9; \
	VPBROADCASTD woff+64(BX), Z13; \
	VPMADDUBSW Z13, Z12, Z10; \
	VPBROADCASTD woff+96(BX), Z13; \
	VPMADDUBSW Z13, Z12, Z11

// Q6Z_NEXT: Z8..Z11 += the next chunk's pair sums (int16, exact).
#define Q6Z_NEXT(toff, woff) \
	Q6Z_CHUNK(toff); \
	VPBROADCASTD woff(BX), Z13; \
	VPMADDUBSW Z13, Z12, Z14; \
	VPADDW Z14, Z8, Z8; \
	VPBROADCASTD woff+32(BX), Z13; \
	VPMADDUBSW Z13, Z12, Z14; \
	VPADDW Z14, Z9, Z9; \
	VPBROADCASTD woff+64(BX), Z13; \
	VPMADDUBSW Z13, Z12, Z14; \
	VPADDW Z14, Z10, Z10; \
	VPBROADCASTD woff+96(BX), Z13; \
	VPMADDUBSW Z13, Z12, Z14; \
	VPADDW Z14, Z11, Z11

// Q6Z_SCALE: Z4..Z7 += each row's scale (int16 pair at soff(R10), rows 64
// bytes apart) times its int16 sums in Z8..Z11.
#define Q6Z_SCALE(soff) \
	VPBROADCASTD soff(R10), Z13; \
	VPMADDWD Z13, Z8, Z8; \
	VPADDD Z8, Z4, Z4; \
	VPBROADCASTD soff+64(R10), Z13; \
	VPMADDWD Z13, Z9, Z9; \
	VPADDD Z9, Z5, Z5; \
	VPBROADCASTD soff+128(R10), Z13; \
	VPMADDWD Z13, Z10, Z10; \
	VPADDD Z10, Z6, Z6; \
	VPBROADCASTD soff+192(R10), Z13; \
	VPMADDWD Z13, Z11, Z11; \
	VPADDD Z11, Z7, Z7

// Q6Z_FIN: a row's super-block into its running sums: isum = acc − C (C at
// coff(R11)), then sum += (d·d_x)·float32(isum) per token (d at doff(R11),
// the sixteen tokens' d_x in Z15), as T6_FIN.
#define Q6Z_FIN(acc, sum, coff, doff) \
	VPBROADCASTD coff(R11), Z13; \
	VPSUBD Z13, acc, acc; \
	VCVTDQ2PS acc, acc; \
	VBROADCASTSS doff(R11), Z13; \
	VMULPS Z15, Z13, Z13; \
	VMULPS acc, Z13, Z13; \
	VADDPS Z13, sum, sum

// func q6_Kq8_Kr4x16AVX512(u, ta, tb *byte, nb int, out *float32)
// Four Q6_K rows prepared by prep4Q6_K against two eight-token tiles:
// each broadcast weight chunk serves sixteen tokens. Per lane the
// sequence of q6_Kq8_Kr4x8AVX2: the same bits. Registers: Z0..Z3 the rows'
// sums, Z4..Z7 their int32 sums of the super-block, Z8..Z11 their int16
// sums of two chunks, Z12 a chunk of both tiles, Z13 a broadcast, Z14 a
// product, Z15 the tokens' d_x. R11 the super-block's prepared rows, R12
// and R14 the tiles'; BX, DI, DX and R10 walk values, tiles and scales.
TEXT ·q6_Kq8_Kr4x16AVX512(SB), NOSPLIT, $0-40
	MOVQ u+0(FP), R11
	MOVQ ta+8(FP), R12
	MOVQ tb+16(FP), R14
	MOVQ nb+24(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	PCALIGN $64
q6kr4x16sb:
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ R11, BX
	MOVQ R12, DI
	MOVQ R14, DX
	LEAQ 1024(R11), R10
	MOVQ $8, R9
q6kr4x16sub:
	Q6Z_FIRST(32, 0)
	Q6Z_NEXT(64, 4)
	Q6Z_SCALE(0)
	Q6Z_FIRST(96, 8)
	Q6Z_NEXT(128, 12)
	Q6Z_SCALE(0)
	Q6Z_FIRST(160, 16)
	Q6Z_NEXT(192, 20)
	Q6Z_SCALE(4)
	Q6Z_FIRST(224, 24)
	Q6Z_NEXT(256, 28)
	Q6Z_SCALE(4)
	ADDQ $128, BX
	ADDQ $256, DI
	ADDQ $256, DX
	ADDQ $8, R10
	DECQ R9
	JNZ  q6kr4x16sub
	VMOVUPS (R12), Y15
	VINSERTF64X4 $1, (R14), Z15, Z15
	Q6Z_FIN(Z4, Z0, 1296, 1280)
	Q6Z_FIN(Z5, Z1, 1300, 1284)
	Q6Z_FIN(Z6, Z2, 1304, 1288)
	Q6Z_FIN(Z7, Z3, 1308, 1292)
	ADDQ $1312, R11
	ADDQ $2080, R12
	ADDQ $2080, R14
	DECQ CX
	JNZ  q6kr4x16sb
	MOVQ out+32(FP), DX
	STORE4
	VZEROUPPER
	RET

// Qword indices (VPERMI2Q, two tables of eight qwords) of the x8
// preparations below. x8PrepQ4: from the low nibbles L and high nibbles H
// of four rows' 16 bytes each (r0 | r1 | r2 | r3), [L.r0 | H.r0 | L.r1 |
// H.r1] then [L.r2 | H.r2 | L.r3 | H.r3]. x8PrepQ8: from [c0 | c1] and
// [c2 | c3] (chunk c: the four rows' 8 bytes, r0..r3), the rows whole:
// [r0 | r1] then [r2 | r3].
DATA x8PrepQ4<>+0(SB)/8, $0
DATA x8PrepQ4<>+8(SB)/8, $1
DATA x8PrepQ4<>+16(SB)/8, $8
DATA x8PrepQ4<>+24(SB)/8, $9
DATA x8PrepQ4<>+32(SB)/8, $2
DATA x8PrepQ4<>+40(SB)/8, $3
DATA x8PrepQ4<>+48(SB)/8, $10
DATA x8PrepQ4<>+56(SB)/8, $11
DATA x8PrepQ4<>+64(SB)/8, $4
DATA x8PrepQ4<>+72(SB)/8, $5
DATA x8PrepQ4<>+80(SB)/8, $12
DATA x8PrepQ4<>+88(SB)/8, $13
DATA x8PrepQ4<>+96(SB)/8, $6
DATA x8PrepQ4<>+104(SB)/8, $7
DATA x8PrepQ4<>+112(SB)/8, $14
DATA x8PrepQ4<>+120(SB)/8, $15
GLOBL x8PrepQ4<>(SB), RODATA|NOPTR, $128
DATA x8PrepQ8<>+0(SB)/8, $0
DATA x8PrepQ8<>+8(SB)/8, $4
DATA x8PrepQ8<>+16(SB)/8, $8
DATA x8PrepQ8<>+24(SB)/8, $12
DATA x8PrepQ8<>+32(SB)/8, $1
DATA x8PrepQ8<>+40(SB)/8, $5
DATA x8PrepQ8<>+48(SB)/8, $9
DATA x8PrepQ8<>+56(SB)/8, $13
DATA x8PrepQ8<>+64(SB)/8, $2
DATA x8PrepQ8<>+72(SB)/8, $6
DATA x8PrepQ8<>+80(SB)/8, $10
DATA x8PrepQ8<>+88(SB)/8, $14
DATA x8PrepQ8<>+96(SB)/8, $3
DATA x8PrepQ8<>+104(SB)/8, $7
DATA x8PrepQ8<>+112(SB)/8, $11
DATA x8PrepQ8<>+120(SB)/8, $15
GLOBL x8PrepQ8<>(SB), RODATA|NOPTR, $128

// func unpack4x8Q4_0SAVX512(q *byte, s *byte, u *byte, nb int)
// unpack4Q4_0S's preparation (nb 128-byte blocks of nibbles as bytes, row
// r's 32 at 32r, then a tail of 16 bytes a block: the four d_w as
// float32) of the four rows of one half of a Q4_0 x8 group (rows8i.go), as
// it lies: q is the half's first row's quants in the first block
// (group + 16 + 16·half; its rows then 32 bytes apart), s its first
// scale (group + 2·4·half); blocks 144 bytes apart.
TEXT ·unpack4x8Q4_0SAVX512(SB), NOSPLIT, $0-32
	MOVQ q+0(FP), SI
	MOVQ s+8(FP), R10
	MOVQ u+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ CX, R11
	SHLQ $7, R11
	ADDQ DI, R11 // the scales' tail
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z15
	VMOVDQU64 x8PrepQ4<>+0(SB), Z13
	VMOVDQU64 x8PrepQ4<>+64(SB), Z14
u4x8q40loop:
	VMOVDQU (SI), X0
	VINSERTI32X4 $1, 32(SI), Z0, Z0
	VINSERTI32X4 $2, 64(SI), Z0, Z0
	VINSERTI32X4 $3, 96(SI), Z0, Z0
	VPANDD Z15, Z0, Z1
	VPSRLW $4, Z0, Z2
	VPANDD Z15, Z2, Z2
	VMOVDQA64 Z13, Z3
	VPERMI2Q Z2, Z1, Z3
	VMOVDQA64 Z14, Z4
	VPERMI2Q Z2, Z1, Z4
	VMOVDQU64 Z3, (DI)
	VMOVDQU64 Z4, 64(DI)
	VMOVQ (R10), X5
	VCVTPH2PS X5, X5
	VMOVUPS X5, (R11)
	ADDQ $144, SI
	ADDQ $144, R10
	ADDQ $128, DI
	ADDQ $16, R11
	DECQ CX
	JNZ  u4x8q40loop
	VZEROUPPER
	RET

// func bias4x8Q8_0AVX512(q *byte, s *byte, u *byte, nb int)
// bias4Q8_0AVX512's preparation (144 bytes a block: the quants plus 128,
// row r at 32r, then the four d_w as float32) of the four rows of one half
// of a Q8_0 x8 group (rows8i.go), as it lies: q is the half's chunk 0 in
// the first block (group + 16 + 32·half; chunk c 64·c bytes on), s its
// first scale (group + 2·4·half); blocks 272 bytes apart.
TEXT ·bias4x8Q8_0AVX512(SB), NOSPLIT, $0-32
	MOVQ q+0(FP), SI
	MOVQ s+8(FP), R10
	MOVQ u+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z15
	VMOVDQU64 x8PrepQ8<>+0(SB), Z13
	VMOVDQU64 x8PrepQ8<>+64(SB), Z14
b4x8q80loop:
	VMOVDQU (SI), Y0
	VINSERTI64X4 $1, 64(SI), Z0, Z0
	VMOVDQU 128(SI), Y1
	VINSERTI64X4 $1, 192(SI), Z1, Z1
	VMOVDQA64 Z13, Z3
	VPERMI2Q Z1, Z0, Z3
	VMOVDQA64 Z14, Z4
	VPERMI2Q Z1, Z0, Z4
	VPXORD Z15, Z3, Z3
	VPXORD Z15, Z4, Z4
	VMOVDQU64 Z3, (DI)
	VMOVDQU64 Z4, 64(DI)
	VMOVQ (R10), X5
	VCVTPH2PS X5, X5
	VMOVUPS X5, 128(DI)
	ADDQ $272, SI
	ADDQ $272, R10
	ADDQ $144, DI
	DECQ CX
	JNZ  b4x8q80loop
	VZEROUPPER
	RET
