//go:build !noasm

#include "textflag.h"

// AVX2 twins of the Q4_K and Q6_K × Q8_K dot products. Per super-block the
// integer sums (scales and mins included) are exact int32 and equal to the
// generic body's; the float epilogue is the generic one, operation for
// operation, so results are bit-identical. Four-token forms keep the four
// running sums in the lanes of one XMM register (lane k = token k), which
// adds each lane exactly as the scalar code does.

DATA kmask0F<>+0(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA kmask0F<>+8(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA kmask0F<>+16(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA kmask0F<>+24(SB)/8, $0x0F0F0F0F0F0F0F0F
GLOBL kmask0F<>(SB), RODATA|NOPTR, $32

DATA kmask30<>+0(SB)/8, $0x3030303030303030
DATA kmask30<>+8(SB)/8, $0x3030303030303030
DATA kmask30<>+16(SB)/8, $0x3030303030303030
DATA kmask30<>+24(SB)/8, $0x3030303030303030
GLOBL kmask30<>(SB), RODATA|NOPTR, $32

#define HSUMI32(acc, xacc, xt) \
	VEXTRACTI128 $1, acc, xt; \
	VPADDD xt, xacc, xacc; \
	VPSHUFD $0x4E, xacc, xt; \
	VPADDD xt, xacc, xacc; \
	VPSHUFD $0xB1, xacc, xt; \
	VPADDD xt, xacc, xacc

// Q4K_SCALES decodes the 12 scale bytes at 4(SI) (ggml's get_scale_min_k4
// for all 8 sub-blocks at once): the 8 scales as int16 go to 0(SP), the 8
// mins, each repeated twice (to pair with bsums 2s and 2s+1), to Y12.
#define Q4K_SCALES \
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

// Q4K_UNPACK: group of 64 at qoff(SI): low nibbles to Y2, high to Y1;
// the scales of its two sub-blocks broadcast to Y3 and Y4.
#define Q4K_UNPACK(qoff, sc0, sc1) \
	VMOVDQU qoff(SI), Y1; \
	VPAND Y15, Y1, Y2; \
	VPSRLW $4, Y1, Y1; \
	VPAND Y15, Y1, Y1; \
	VPBROADCASTW sc0(SP), Y3; \
	VPBROADCASTW sc1(SP), Y4

// Q4K_TOKEN: one token's 64 quants at ylo / yhi (32 bytes each) into acc.
#define Q4K_TOKEN(ylo, yhi, acc) \
	VPMADDUBSW ylo, Y2, Y8; \
	VPMADDUBSW yhi, Y1, Y9; \
	VPMADDWD Y3, Y8, Y8; \
	VPMADDWD Y4, Y9, Y9; \
	VPADDD Y8, acc, acc; \
	VPADDD Y9, acc, acc

// Q4K_FIN: token result d·isum − dmin·summs into X2 (lane 0); dx at xd,
// bsums at xbs; integer sums in acc.
#define Q4K_FIN(xd, xbs, acc, xacc) \
	VPMADDWD xbs, Y12, Y8; \
	HSUMI32(Y8, X8, X9); \
	HSUMI32(acc, xacc, X9); \
	VCVTDQ2PS xacc, xacc; \
	VCVTDQ2PS X8, X8; \
	VMOVSS xd, X2; \
	VPBROADCASTW (SI), X3; VCVTPH2PS X3, X3; \
	VPBROADCASTW 2(SI), X4; VCVTPH2PS X4, X4; \
	VMULSS X3, X2, X3; VMULSS X4, X2, X4; \
	VMULSS xacc, X3, X3; VMULSS X8, X4, X4; \
	VSUBSS X4, X3, X2

// func q4_Kq8_KAVX2(w, x *byte, nb int) float32
TEXT ·q4_Kq8_KAVX2(SB), NOSPLIT, $32-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VMOVDQU kmask0F<>(SB), Y15
	VXORPS X10, X10, X10
q4kloop:
	// Rows are read one after another: fetch ahead (the next row's start).
	PREFETCHT0 576(SI)
	PREFETCHT0 640(SI)
	Q4K_SCALES
	VPXOR Y0, Y0, Y0
	Q4K_UNPACK(16, 0, 2)
	Q4K_TOKEN(4(DI), 36(DI), Y0)
	Q4K_UNPACK(48, 4, 6)
	Q4K_TOKEN(68(DI), 100(DI), Y0)
	Q4K_UNPACK(80, 8, 10)
	Q4K_TOKEN(132(DI), 164(DI), Y0)
	Q4K_UNPACK(112, 12, 14)
	Q4K_TOKEN(196(DI), 228(DI), Y0)
	Q4K_FIN((DI), 260(DI), Y0, X0)
	VADDSS X2, X10, X10
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q4kloop
	VZEROUPPER
	MOVSS X10, ret+24(FP)
	RET

#define Q4K_GROUP4(qoff, sc0, sc1, y) \
	Q4K_UNPACK(qoff, sc0, sc1); \
	Q4K_TOKEN(y(DI), y+32(DI), Y0); \
	Q4K_TOKEN(y(DI)(R8*1), y+32(DI)(R8*1), Y5); \
	Q4K_TOKEN(y(DI)(R8*2), y+32(DI)(R8*2), Y6); \
	Q4K_TOKEN(y(DI)(R9*1), y+32(DI)(R9*1), Y7)

// func q4_Kq8_Kx4AVX2(w, x *byte, stride, nb int, out *[4]float32)
TEXT ·q4_Kq8_Kx4AVX2(SB), NOSPLIT, $32-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	VMOVDQU kmask0F<>(SB), Y15
	VXORPS X13, X13, X13
q4kx4loop:
	Q4K_SCALES
	VPXOR Y0, Y0, Y0
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	Q4K_GROUP4(16, 0, 2, 4)
	Q4K_GROUP4(48, 4, 6, 68)
	Q4K_GROUP4(80, 8, 10, 132)
	Q4K_GROUP4(112, 12, 14, 196)
	Q4K_FIN((DI), 260(DI), Y0, X0)
	VMOVAPS X2, X11
	Q4K_FIN((DI)(R8*1), 260(DI)(R8*1), Y5, X5)
	VINSERTPS $0x10, X2, X11, X11
	Q4K_FIN((DI)(R8*2), 260(DI)(R8*2), Y6, X6)
	VINSERTPS $0x20, X2, X11, X11
	Q4K_FIN((DI)(R9*1), 260(DI)(R9*1), Y7, X7)
	VINSERTPS $0x30, X2, X11, X11
	VADDPS X11, X13, X13
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q4kx4loop
	MOVQ out+32(FP), DX
	VMOVUPS X13, (DX)
	VZEROUPPER
	RET

// Q6K_LOAD loads half a super-block: ql[l] to Y1, ql[l+32] to Y2, qh to Y3.
#define Q6K_LOAD(qlo, qho) \
	VMOVDQU qlo(SI), Y1; \
	VMOVDQU qlo+32(SI), Y2; \
	VMOVDQU qho(SI), Y3

// Q6K_Q1..Q6K_Q4 build the four 32-quant groups (elements l, l+32, l+64,
// l+96 of the half) as unsigned 6-bit values in Y4: a nibble of ql and two
// bits of qh moved to bits 4..5 (word shifts, then the 0x30 mask drops
// what crossed a byte).
#define Q6K_Q1 \
	VPAND Y15, Y1, Y4; \
	VPSLLW $4, Y3, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y4, Y4

#define Q6K_Q2 \
	VPAND Y15, Y2, Y4; \
	VPSLLW $2, Y3, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y4, Y4

#define Q6K_Q3 \
	VPSRLW $4, Y1, Y4; \
	VPAND Y15, Y4, Y4; \
	VPAND Y14, Y3, Y5; \
	VPOR Y5, Y4, Y4

#define Q6K_Q4 \
	VPSRLW $4, Y2, Y4; \
	VPAND Y15, Y4, Y4; \
	VPSRLW $2, Y3, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y4, Y4

// Q6K_SC: the scale pair (word offsets a, b at SP) as [a×8 | b×8], in Y8.
#define Q6K_SC(a, b) \
	VPBROADCASTW a(SP), X8; \
	VPBROADCASTW b(SP), X9; \
	VINSERTI128 $1, X9, Y8, Y8

// Q6K_T1: one token's 32 quants at y times Y4, scaled by Y8, into acc.
#define Q6K_T1(y, acc) \
	VPMADDUBSW y, Y4, Y6; \
	VPMADDWD Y8, Y6, Y6; \
	VPADDD Y6, acc, acc

#define Q6K_TOK1(yo) Q6K_T1(yo(DI), Y0)

#define Q6K_TOK4(yo) \
	Q6K_T1(yo(DI), Y0); \
	Q6K_T1(yo(DI)(R8*1), Y7); \
	Q6K_T1(yo(DI)(R8*2), Y10); \
	Q6K_T1(yo(DI)(R9*1), Y11)

// Q6K_FIN: token result (d_w·dx)·(isum) into X2 lane 0, where
// isum = Σ acc − 32·Σ scale·bsum; dx at xd, bsums at xbs.
#define Q6K_FIN(xd, xbs, acc, xacc) \
	VMOVDQU 0(SP), Y5; \
	VPMADDWD xbs, Y5, Y5; \
	VPSLLD $5, Y5, Y5; \
	VPSUBD Y5, acc, acc; \
	HSUMI32(acc, xacc, X9); \
	VCVTDQ2PS xacc, xacc; \
	VPBROADCASTW 208(SI), X2; VCVTPH2PS X2, X2; \
	VMULSS xd, X2, X2; \
	VMULSS xacc, X2, X2

#define Q6K_SCALES \
	VPMOVSXBW 192(SI), Y5; \
	VMOVDQU Y5, 0(SP)

// func q6_Kq8_KAVX2(w, x *byte, nb int) float32
TEXT ·q6_Kq8_KAVX2(SB), NOSPLIT, $32-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VMOVDQU kmask0F<>(SB), Y15
	VMOVDQU kmask30<>(SB), Y14
	VXORPS X13, X13, X13
q6kloop:
	PREFETCHT0 768(SI)
	PREFETCHT0 832(SI)
	PREFETCHT0 896(SI)
	Q6K_SCALES
	VPXOR Y0, Y0, Y0
	Q6K_LOAD(0, 128)
	Q6K_Q1
	Q6K_SC(0, 2)
	Q6K_TOK1(4)
	Q6K_Q2
	Q6K_SC(4, 6)
	Q6K_TOK1(36)
	Q6K_Q3
	Q6K_SC(8, 10)
	Q6K_TOK1(68)
	Q6K_Q4
	Q6K_SC(12, 14)
	Q6K_TOK1(100)
	Q6K_LOAD(64, 160)
	Q6K_Q1
	Q6K_SC(16, 18)
	Q6K_TOK1(132)
	Q6K_Q2
	Q6K_SC(20, 22)
	Q6K_TOK1(164)
	Q6K_Q3
	Q6K_SC(24, 26)
	Q6K_TOK1(196)
	Q6K_Q4
	Q6K_SC(28, 30)
	Q6K_TOK1(228)
	Q6K_FIN((DI), 260(DI), Y0, X0)
	VADDSS X2, X13, X13
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q6kloop
	VZEROUPPER
	MOVSS X13, ret+24(FP)
	RET

// func q6_Kq8_Kx4AVX2(w, x *byte, stride, nb int, out *[4]float32)
TEXT ·q6_Kq8_Kx4AVX2(SB), NOSPLIT, $32-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	VMOVDQU kmask0F<>(SB), Y15
	VMOVDQU kmask30<>(SB), Y14
	VXORPS X13, X13, X13
q6kx4loop:
	Q6K_SCALES
	VPXOR Y0, Y0, Y0
	VPXOR Y7, Y7, Y7
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	Q6K_LOAD(0, 128)
	Q6K_Q1
	Q6K_SC(0, 2)
	Q6K_TOK4(4)
	Q6K_Q2
	Q6K_SC(4, 6)
	Q6K_TOK4(36)
	Q6K_Q3
	Q6K_SC(8, 10)
	Q6K_TOK4(68)
	Q6K_Q4
	Q6K_SC(12, 14)
	Q6K_TOK4(100)
	Q6K_LOAD(64, 160)
	Q6K_Q1
	Q6K_SC(16, 18)
	Q6K_TOK4(132)
	Q6K_Q2
	Q6K_SC(20, 22)
	Q6K_TOK4(164)
	Q6K_Q3
	Q6K_SC(24, 26)
	Q6K_TOK4(196)
	Q6K_Q4
	Q6K_SC(28, 30)
	Q6K_TOK4(228)
	Q6K_FIN((DI), 260(DI), Y0, X0)
	VMOVAPS X2, X12
	Q6K_FIN((DI)(R8*1), 260(DI)(R8*1), Y7, X7)
	VINSERTPS $0x10, X2, X12, X12
	Q6K_FIN((DI)(R8*2), 260(DI)(R8*2), Y10, X10)
	VINSERTPS $0x20, X2, X12, X12
	Q6K_FIN((DI)(R9*1), 260(DI)(R9*1), Y11, X11)
	VINSERTPS $0x30, X2, X12, X12
	VADDPS X12, X13, X13
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q6kx4loop
	MOVQ out+32(FP), DX
	VMOVUPS X13, (DX)
	VZEROUPPER
	RET
