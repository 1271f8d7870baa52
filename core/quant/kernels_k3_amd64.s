//go:build !noasm

#include "textflag.h"

// AVX2 twins of the Q2_K, Q3_K and Q5_K × Q8_K dot products
// (kernels_generic.go). Integer sums are exact int32, equal to the generic
// body's whatever their grouping; the float parts repeat the generic body
// operation for operation, so results are bit-identical:
//   - Q2_K keeps ggml's 8 float lanes: per block acc = fma(−d_x·dmin, Σmin·bsum
//     lanes, acc), then acc = fma(d_x·d, sumi lanes, acc); hsum8 at the end.
//   - Q3_K: sum += (d·d_x)·isum, multiply and add rounded separately.
//   - Q5_K: acc = fma(isum, d·d_x, acc), then acc = fma(−mins, dmin·d_x, acc).

DATA k3mask0F<>+0(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA k3mask0F<>+8(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA k3mask0F<>+16(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA k3mask0F<>+24(SB)/8, $0x0F0F0F0F0F0F0F0F
GLOBL k3mask0F<>(SB), RODATA|NOPTR, $32

DATA k3mask03<>+0(SB)/8, $0x0303030303030303
DATA k3mask03<>+8(SB)/8, $0x0303030303030303
DATA k3mask03<>+16(SB)/8, $0x0303030303030303
DATA k3mask03<>+24(SB)/8, $0x0303030303030303
GLOBL k3mask03<>(SB), RODATA|NOPTR, $32

DATA k3mask04<>+0(SB)/8, $0x0404040404040404
DATA k3mask04<>+8(SB)/8, $0x0404040404040404
DATA k3mask04<>+16(SB)/8, $0x0404040404040404
DATA k3mask04<>+24(SB)/8, $0x0404040404040404
GLOBL k3mask04<>(SB), RODATA|NOPTR, $32

DATA k3mask10<>+0(SB)/8, $0x1010101010101010
DATA k3mask10<>+8(SB)/8, $0x1010101010101010
DATA k3mask10<>+16(SB)/8, $0x1010101010101010
DATA k3mask10<>+24(SB)/8, $0x1010101010101010
GLOBL k3mask10<>(SB), RODATA|NOPTR, $32

DATA k3bias20<>+0(SB)/8, $0x2020202020202020
DATA k3bias20<>+8(SB)/8, $0x2020202020202020
GLOBL k3bias20<>(SB), RODATA|NOPTR, $16

#define HSUMI32(acc, xacc, xt) \
	VEXTRACTI128 $1, acc, xt; \
	VPADDD xt, xacc, xacc; \
	VPSHUFD $0x4E, xacc, xt; \
	VPADDD xt, xacc, xacc; \
	VPSHUFD $0xB1, xacc, xt; \
	VPADDD xt, xacc, xacc

// SCPAIR: the int16 scales at word offsets a and b of SP as [a×8 | b×8]
// in Y8 (a for the chunk's first 16 elements, b for the last 16).
#define SCPAIR(a, b) \
	VPBROADCASTW a(SP), X8; \
	VPBROADCASTW b(SP), X9; \
	VINSERTI128 $1, X9, Y8, Y8

// ---------------------------------------------------------------- Q2_K

// Q2K_CHUNK: chunk k of a half whose 32 quant bytes are in Y1: the 2-bit
// values at bit 2k times the 32 quants at y, scaled per 16, into Y0.
#define Q2K_CHUNK(shift, y, sa, sb) \
	VPSRLW $shift, Y1, Y2; \
	VPAND Y15, Y2, Y2; \
	VPMADDUBSW y(DI), Y2, Y2; \
	SCPAIR(sa, sb); \
	VPMADDWD Y8, Y2, Y2; \
	VPADDD Y2, Y0, Y0

// func q2_Kq8_KAVX2(w, x *byte, nb int) float32
TEXT ·q2_Kq8_KAVX2(SB), NOSPLIT, $32-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VMOVDQU k3mask03<>(SB), Y15
	VMOVDQU k3mask0F<>(SB), X14
	VXORPS Y10, Y10, Y10
q2kloop:
	// d_x·d and d_x·dmin (negated by the FNMADD below) in all lanes.
	VBROADCASTSS (DI), Y3
	VPBROADCASTW 80(SI), X4
	VCVTPH2PS X4, Y4
	VMULPS Y4, Y3, Y4
	VPBROADCASTW 82(SI), X5
	VCVTPH2PS X5, Y5
	VMULPS Y5, Y3, Y5
	// Scales (low nibbles) as int16 to 0(SP), mins (high) against bsums.
	VMOVDQU (SI), X6
	VPAND X14, X6, X7
	VPMOVZXBW X7, Y7
	VMOVDQU Y7, 0(SP)
	VPSRLW $4, X6, X6
	VPAND X14, X6, X6
	VPMOVZXBW X6, Y6
	VPMADDWD 260(DI), Y6, Y6
	VCVTDQ2PS Y6, Y6
	VFNMADD231PS Y6, Y5, Y10
	VPXOR Y0, Y0, Y0
	VMOVDQU 16(SI), Y1
	Q2K_CHUNK(0, 4, 0, 2)
	Q2K_CHUNK(2, 36, 4, 6)
	Q2K_CHUNK(4, 68, 8, 10)
	Q2K_CHUNK(6, 100, 12, 14)
	VMOVDQU 48(SI), Y1
	Q2K_CHUNK(0, 132, 16, 18)
	Q2K_CHUNK(2, 164, 20, 22)
	Q2K_CHUNK(4, 196, 24, 26)
	Q2K_CHUNK(6, 228, 28, 30)
	VCVTDQ2PS Y0, Y0
	VFMADD231PS Y0, Y4, Y10
	ADDQ $84, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q2kloop
	// hsum_float_8 of Y10.
	VEXTRACTF128 $1, Y10, X1
	VADDPS X1, X10, X0
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// ---------------------------------------------------------------- Q3_K

// Q3K_SCALES: the 16 signed 6-bit scales of the block at SI as int16 at
// 0(SP) (ggml's aux[] unpacking of the 12 bytes at 96(SI), minus 32).
#define Q3K_SCALES \
	MOVL 96(SI), AX; MOVL 100(SI), BX; MOVL 104(SI), DX; \
	MOVL AX, R10; ANDL $0x0f0f0f0f, R10; \
	MOVL DX, R12; ANDL $0x03030303, R12; SHLL $4, R12; ORL R12, R10; \
	MOVL BX, R11; ANDL $0x0f0f0f0f, R11; \
	MOVL DX, R12; SHRL $2, R12; ANDL $0x03030303, R12; SHLL $4, R12; ORL R12, R11; \
	SHRL $4, AX; ANDL $0x0f0f0f0f, AX; \
	MOVL DX, R12; SHRL $4, R12; ANDL $0x03030303, R12; SHLL $4, R12; ORL R12, AX; \
	SHRL $4, BX; ANDL $0x0f0f0f0f, BX; \
	SHRL $6, DX; ANDL $0x03030303, DX; SHLL $4, DX; ORL DX, BX; \
	SHLQ $32, R11; ORQ R10, R11; \
	SHLQ $32, BX; ORQ AX, BX; \
	VMOVQ R11, X6; VPINSRQ $1, BX, X6, X6; \
	VPSUBB X14, X6, X6; \
	VPMOVSXBW X6, Y6; \
	VMOVDQU Y6, 0(SP)

// Q3K_CHUNK: chunk c (= 4·half + j) of a half whose 2-bit quants are in Y1
// and whose hmask is in Y11: values (q>>2j)&3 − 4·(hmask bit c clear) times
// the 32 quants at y, scaled per 16 (sub-blocks 2c, 2c+1), into Y0. The
// hmask bit moves to bit 2 with one word shift (hshift: left by 2−c or
// right by c−2; hins names the instruction, VPSLLW or VPSRLW).
#define Q3K_CHUNK(shift, hins, hshift, y, sa, sb) \
	VPSRLW $shift, Y1, Y2; \
	VPAND Y15, Y2, Y2; \
	hins $hshift, Y11, Y3; \
	VPANDN Y13, Y3, Y3; \
	VMOVDQU y(DI), Y4; \
	VPMADDUBSW Y4, Y2, Y2; \
	VPMADDUBSW Y4, Y3, Y3; \
	VPSUBW Y3, Y2, Y2; \
	SCPAIR(sa, sb); \
	VPMADDWD Y8, Y2, Y2; \
	VPADDD Y2, Y0, Y0

// func q3_Kq8_KAVX2(w, x *byte, nb int) float32
TEXT ·q3_Kq8_KAVX2(SB), NOSPLIT, $32-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VMOVDQU k3mask03<>(SB), Y15
	VMOVDQU k3bias20<>(SB), X14
	VMOVDQU k3mask04<>(SB), Y13
	VXORPS X10, X10, X10
q3kloop:
	Q3K_SCALES
	VPXOR Y0, Y0, Y0
	VMOVDQU (SI), Y11
	VMOVDQU 32(SI), Y1
	Q3K_CHUNK(0, VPSLLW, 2, 4, 0, 2)
	Q3K_CHUNK(2, VPSLLW, 1, 36, 4, 6)
	Q3K_CHUNK(4, VPSRLW, 0, 68, 8, 10)
	Q3K_CHUNK(6, VPSRLW, 1, 100, 12, 14)
	VMOVDQU 64(SI), Y1
	Q3K_CHUNK(0, VPSRLW, 2, 132, 16, 18)
	Q3K_CHUNK(2, VPSRLW, 3, 164, 20, 22)
	Q3K_CHUNK(4, VPSRLW, 4, 196, 24, 26)
	Q3K_CHUNK(6, VPSRLW, 5, 228, 28, 30)
	HSUMI32(Y0, X0, X9)
	VCVTDQ2PS X0, X0
	VPBROADCASTW 108(SI), X2
	VCVTPH2PS X2, X2
	VMULSS (DI), X2, X2
	VMULSS X0, X2, X2
	VADDSS X2, X10, X10
	ADDQ $110, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q3kloop
	VZEROUPPER
	MOVSS X10, ret+24(FP)
	RET

// ---------------------------------------------------------------- Q5_K

// Q5K_SCALES decodes the 12 scale bytes at 4(SI) (get_scale_min_k4 for
// all 8 sub-blocks): the 8 scales as int16 to 0(SP), the 8 mins, each
// repeated twice (to pair with bsums 2s and 2s+1), to Y12.
#define Q5K_SCALES \
	MOVL 4(SI), AX; MOVL 8(SI), BX; MOVL 12(SI), DX; \
	MOVL AX, R10; ANDL $0x3f3f3f3f, R10; \
	MOVL DX, R11; ANDL $0x0f0f0f0f, R11; \
	SHRL $6, AX; ANDL $0x03030303, AX; SHLL $4, AX; ORL AX, R11; \
	MOVL BX, R12; ANDL $0x3f3f3f3f, R12; \
	SHRL $4, DX; ANDL $0x0f0f0f0f, DX; \
	SHRL $6, BX; ANDL $0x03030303, BX; SHLL $4, BX; ORL BX, DX; \
	SHLQ $32, R11; ORQ R10, R11; VMOVQ R11, X8; VPMOVZXBW X8, X8; VMOVDQU X8, 0(SP); \
	SHLQ $32, DX; ORQ R12, DX; VMOVQ DX, X12; VPMOVZXBW X12, X12; \
	VPUNPCKHWD X12, X12, X9; VPUNPCKLWD X12, X12, X12; VINSERTI128 $1, X9, Y12, Y12

// Q5K_HALF: 32 five-bit values into vo: the nibbles in vo, the qh bit
// (Y11) moved to bit 4 by hins $hshift, masked, ORed in.
#define Q5K_HALF(vo, hins, hshift) \
	hins $hshift, Y11, Y3; \
	VPAND Y10, Y3, Y3; \
	VPOR Y3, vo, vo

// Q5K_UNPACK: group j of 64 at qoff(SI) as five-bit values, sub-block 2j
// in Y2 and 2j+1 in Y1; their scales (word offsets sa, sb of SP) in Y3, Y4.
#define Q5K_UNPACK(qoff, lins, lshift, hins, hshift, sa, sb) \
	VMOVDQU qoff(SI), Y1; \
	VPAND Y15, Y1, Y2; \
	VPSRLW $4, Y1, Y1; \
	VPAND Y15, Y1, Y1; \
	Q5K_HALF(Y2, lins, lshift); \
	Q5K_HALF(Y1, hins, hshift); \
	VPBROADCASTW sa(SP), Y3; \
	VPBROADCASTW sb(SP), Y4

// Q5K_TOKEN: one token's 64 quants at ylo, yhi times the unpacked group,
// scaled, into acc.
#define Q5K_TOKEN(ylo, yhi, acc) \
	VPMADDUBSW ylo, Y2, Y8; \
	VPMADDUBSW yhi, Y1, Y9; \
	VPMADDWD Y3, Y8, Y8; \
	VPMADDWD Y4, Y9, Y9; \
	VPADDD Y8, acc, acc; \
	VPADDD Y9, acc, acc

#define Q5K_GROUP(qoff, lins, lshift, hins, hshift, y, sa, sb) \
	Q5K_UNPACK(qoff, lins, lshift, hins, hshift, sa, sb); \
	Q5K_TOKEN(y(DI), y+32(DI), Y0)

// func q5_Kq8_KAVX2(w, x *byte, nb int) float32
TEXT ·q5_Kq8_KAVX2(SB), NOSPLIT, $32-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VMOVDQU k3mask0F<>(SB), Y15
	VMOVDQU k3mask10<>(SB), Y10
	VXORPS X13, X13, X13
q5kloop:
	Q5K_SCALES
	VPXOR Y0, Y0, Y0
	VMOVDQU 16(SI), Y11
	Q5K_GROUP(48, VPSLLW, 4, VPSLLW, 3, 4, 0, 2)
	Q5K_GROUP(80, VPSLLW, 2, VPSLLW, 1, 68, 4, 6)
	Q5K_GROUP(112, VPSRLW, 0, VPSRLW, 1, 132, 8, 10)
	Q5K_GROUP(144, VPSRLW, 2, VPSRLW, 3, 196, 12, 14)
	// mins·bsums and the integer sum, then the two FMAs.
	VPMADDWD 260(DI), Y12, Y8
	HSUMI32(Y8, X8, X9)
	HSUMI32(Y0, X0, X9)
	VCVTDQ2PS X0, X0
	VCVTDQ2PS X8, X8
	VMOVSS (DI), X2
	VPBROADCASTW (SI), X3
	VCVTPH2PS X3, X3
	VMULSS X2, X3, X3
	VPBROADCASTW 2(SI), X4
	VCVTPH2PS X4, X4
	VMULSS X2, X4, X4
	VFMADD231SS X3, X0, X13
	VFNMADD231SS X4, X8, X13
	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q5kloop
	VZEROUPPER
	MOVSS X13, ret+24(FP)
	RET

// ------------------------------------------------------ four-token forms
//
// One weight row against four tokens at DI, DI+R8, DI+2·R8, DI+R9: the
// weight blocks are unpacked once for the four; the four running sums sit
// in the lanes of X13 (lane k = token k) and every float step is the
// one-token step done lane-wise, so each lane is bit-identical to the
// one-token kernel.

// DX4: the four tokens' d_x (float32 at offset 0 of their blocks) in X2.
#define DX4 \
	VMOVSS (DI), X2; \
	VINSERTPS $0x10, (DI)(R8*1), X2, X2; \
	VINSERTPS $0x20, (DI)(R8*2), X2, X2; \
	VINSERTPS $0x30, (DI)(R9*1), X2, X2

// SUM4I: the int32 lanes of a, b, c, d summed per register into a's low
// four lanes [Σa, Σb, Σc, Σd] (exact). Clobbers b, c, d.
#define SUM4I(a, b, c, d, xa, xt) \
	VPHADDD b, a, a; \
	VPHADDD d, c, c; \
	VPHADDD c, a, a; \
	VEXTRACTI128 $1, a, xt; \
	VPADDD xt, xa, xa

#define Q5K_GROUP4(qoff, lins, lshift, hins, hshift, y, sa, sb) \
	Q5K_UNPACK(qoff, lins, lshift, hins, hshift, sa, sb); \
	Q5K_TOKEN(y(DI), y+32(DI), Y0); \
	Q5K_TOKEN(y(DI)(R8*1), y+32(DI)(R8*1), Y5); \
	Q5K_TOKEN(y(DI)(R8*2), y+32(DI)(R8*2), Y6); \
	Q5K_TOKEN(y(DI)(R9*1), y+32(DI)(R9*1), Y7)

// func q5_Kq8_Kx4AVX2(w, x *byte, stride, nb int, out *[4]float32)
TEXT ·q5_Kq8_Kx4AVX2(SB), NOSPLIT, $32-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	VMOVDQU k3mask0F<>(SB), Y15
	VMOVDQU k3mask10<>(SB), Y10
	VXORPS X13, X13, X13
q5kx4loop:
	Q5K_SCALES
	VPXOR Y0, Y0, Y0
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VMOVDQU 16(SI), Y11
	Q5K_GROUP4(48, VPSLLW, 4, VPSLLW, 3, 4, 0, 2)
	Q5K_GROUP4(80, VPSLLW, 2, VPSLLW, 1, 68, 4, 6)
	Q5K_GROUP4(112, VPSRLW, 0, VPSRLW, 1, 132, 8, 10)
	Q5K_GROUP4(144, VPSRLW, 2, VPSRLW, 3, 196, 12, 14)
	// mins·bsums per token, then the integer sums, both as [t0..t3].
	VPMADDWD 260(DI), Y12, Y8
	VPMADDWD 260(DI)(R8*1), Y12, Y9
	VPMADDWD 260(DI)(R8*2), Y12, Y1
	VPMADDWD 260(DI)(R9*1), Y12, Y2
	SUM4I(Y8, Y9, Y1, Y2, X8, X9)
	SUM4I(Y0, Y5, Y6, Y7, X0, X9)
	VCVTDQ2PS X0, X0
	VCVTDQ2PS X8, X8
	DX4
	VPBROADCASTW (SI), X3
	VCVTPH2PS X3, X3
	VMULPS X2, X3, X3
	VPBROADCASTW 2(SI), X4
	VCVTPH2PS X4, X4
	VMULPS X2, X4, X4
	VFMADD231PS X3, X0, X13
	VFNMADD231PS X4, X8, X13
	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q5kx4loop
	MOVQ out+32(FP), DX
	VMOVUPS X13, (DX)
	VZEROUPPER
	RET

// Q3K_CHUNK4: Q3K_CHUNK for four tokens (accumulators Y0, Y6, Y7, Y10;
// the 4·(hmask clear) mask in Y12).
#define Q3K_T(y, acc) \
	VMOVDQU y, Y4; \
	VPMADDUBSW Y4, Y2, Y5; \
	VPMADDUBSW Y4, Y3, Y4; \
	VPSUBW Y4, Y5, Y5; \
	VPMADDWD Y8, Y5, Y5; \
	VPADDD Y5, acc, acc

#define Q3K_CHUNK4(shift, hins, hshift, y, sa, sb) \
	VPSRLW $shift, Y1, Y2; \
	VPAND Y15, Y2, Y2; \
	hins $hshift, Y11, Y3; \
	VPANDN Y12, Y3, Y3; \
	SCPAIR(sa, sb); \
	Q3K_T(y(DI), Y0); \
	Q3K_T(y(DI)(R8*1), Y6); \
	Q3K_T(y(DI)(R8*2), Y7); \
	Q3K_T(y(DI)(R9*1), Y10)

// func q3_Kq8_Kx4AVX2(w, x *byte, stride, nb int, out *[4]float32)
TEXT ·q3_Kq8_Kx4AVX2(SB), NOSPLIT, $32-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	VMOVDQU k3mask03<>(SB), Y15
	VMOVDQU k3bias20<>(SB), X14
	VMOVDQU k3mask04<>(SB), Y12
	VXORPS X13, X13, X13
q3kx4loop:
	Q3K_SCALES
	VPXOR Y0, Y0, Y0
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VPXOR Y10, Y10, Y10
	VMOVDQU (SI), Y11
	VMOVDQU 32(SI), Y1
	Q3K_CHUNK4(0, VPSLLW, 2, 4, 0, 2)
	Q3K_CHUNK4(2, VPSLLW, 1, 36, 4, 6)
	Q3K_CHUNK4(4, VPSRLW, 0, 68, 8, 10)
	Q3K_CHUNK4(6, VPSRLW, 1, 100, 12, 14)
	VMOVDQU 64(SI), Y1
	Q3K_CHUNK4(0, VPSRLW, 2, 132, 16, 18)
	Q3K_CHUNK4(2, VPSRLW, 3, 164, 20, 22)
	Q3K_CHUNK4(4, VPSRLW, 4, 196, 24, 26)
	Q3K_CHUNK4(6, VPSRLW, 5, 228, 28, 30)
	SUM4I(Y0, Y6, Y7, Y10, X0, X9)
	VCVTDQ2PS X0, X0
	DX4
	VPBROADCASTW 108(SI), X3
	VCVTPH2PS X3, X3
	VMULPS X2, X3, X3
	VMULPS X0, X3, X3
	VADDPS X3, X13, X13
	ADDQ $110, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q3kx4loop
	MOVQ out+32(FP), DX
	VMOVUPS X13, (DX)
	VZEROUPPER
	RET

// Q2K_T: one token's chunk (values in Y2, scale pair in Y8) into acc.
#define Q2K_T(y, acc) \
	VPMADDUBSW y, Y2, Y3; \
	VPMADDWD Y8, Y3, Y3; \
	VPADDD Y3, acc, acc

#define Q2K_CHUNK4(shift, y, sa, sb) \
	VPSRLW $shift, Y1, Y2; \
	VPAND Y15, Y2, Y2; \
	SCPAIR(sa, sb); \
	Q2K_T(y(DI), Y0); \
	Q2K_T(y(DI)(R8*1), Y5); \
	Q2K_T(y(DI)(R8*2), Y6); \
	Q2K_T(y(DI)(R9*1), Y7)

// Q2K_MINS: token at base (its bsums at bsums): facc = fma(−(d_x·dmin), Σmin·bsum lanes, facc),
// with the mins (int16) in Y4 and dmin (float32, all lanes) in Y9.
#define Q2K_MINS(base, bsums, facc) \
	VBROADCASTSS base, Y2; \
	VMULPS Y9, Y2, Y2; \
	VPMADDWD bsums, Y4, Y3; \
	VCVTDQ2PS Y3, Y3; \
	VFNMADD231PS Y3, Y2, facc

// Q2K_SUMS: token at base: facc = fma(d_x·d, sumi lanes, facc), d in Y9.
#define Q2K_SUMS(base, iacc, facc) \
	VBROADCASTSS base, Y2; \
	VMULPS Y9, Y2, Y2; \
	VCVTDQ2PS iacc, iacc; \
	VFMADD231PS iacc, Y2, facc

// HSUM8TO: hsum_float_8 of Y(acc) stored as float32 at dst (X1, X2 clobbered).
#define HSUM8TO(acc, xacc, dst) \
	VEXTRACTF128 $1, acc, X1; \
	VADDPS X1, xacc, X2; \
	VMOVHLPS X2, X2, X1; \
	VADDPS X1, X2, X2; \
	VMOVSHDUP X2, X1; \
	VADDSS X1, X2, X2; \
	VMOVSS X2, dst

// func q2_Kq8_Kx4AVX2(w, x *byte, stride, nb int, out *[4]float32)
TEXT ·q2_Kq8_Kx4AVX2(SB), NOSPLIT, $32-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	VMOVDQU k3mask03<>(SB), Y15
	VMOVDQU k3mask0F<>(SB), X14
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
q2kx4loop:
	VMOVDQU (SI), X1
	VPAND X14, X1, X2
	VPMOVZXBW X2, Y2
	VMOVDQU Y2, 0(SP)
	VPSRLW $4, X1, X1
	VPAND X14, X1, X1
	VPMOVZXBW X1, Y4
	VPBROADCASTW 82(SI), X9
	VCVTPH2PS X9, Y9
	Q2K_MINS((DI), 260(DI), Y10)
	Q2K_MINS((DI)(R8*1), 260(DI)(R8*1), Y11)
	Q2K_MINS((DI)(R8*2), 260(DI)(R8*2), Y12)
	Q2K_MINS((DI)(R9*1), 260(DI)(R9*1), Y13)
	VPXOR Y0, Y0, Y0
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VMOVDQU 16(SI), Y1
	Q2K_CHUNK4(0, 4, 0, 2)
	Q2K_CHUNK4(2, 36, 4, 6)
	Q2K_CHUNK4(4, 68, 8, 10)
	Q2K_CHUNK4(6, 100, 12, 14)
	VMOVDQU 48(SI), Y1
	Q2K_CHUNK4(0, 132, 16, 18)
	Q2K_CHUNK4(2, 164, 20, 22)
	Q2K_CHUNK4(4, 196, 24, 26)
	Q2K_CHUNK4(6, 228, 28, 30)
	VPBROADCASTW 80(SI), X9
	VCVTPH2PS X9, Y9
	Q2K_SUMS((DI), Y0, Y10)
	Q2K_SUMS((DI)(R8*1), Y5, Y11)
	Q2K_SUMS((DI)(R8*2), Y6, Y12)
	Q2K_SUMS((DI)(R9*1), Y7, Y13)
	ADDQ $84, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q2kx4loop
	MOVQ out+32(FP), DX
	HSUM8TO(Y10, X10, 0(DX))
	HSUM8TO(Y11, X11, 4(DX))
	HSUM8TO(Y12, X12, 8(DX))
	HSUM8TO(Y13, X13, 12(DX))
	VZEROUPPER
	RET
