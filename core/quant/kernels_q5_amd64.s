//go:build !noasm

#include "textflag.h"

// AVX2 + F16C twins of the Q4_1 × Q8_1, Q5_0 × Q8_0 and Q5_1 × Q8_1 dot
// products (kernels_generic.go), bit-identical to them:
//   - Q4_1 is block-sequential: per block an exact integer sum, then
//     acc = fma(d_w·d_x, sumi, acc) and acc = fma(m_w, s_x, acc), scalar.
//   - Q5_0 and Q5_1 keep ggml's 8 float lanes: lane l of a block is the
//     exact integer sum of elements 4l..4l+3, accumulated by one FMA with
//     d_w·d_x per block, and the lanes folded as hsum8 at the end (Q5_1
//     adds its scalar chain of fma(m_w, s_x, ·) last).

DATA q5mask0F<>+0(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA q5mask0F<>+8(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA q5mask0F<>+16(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA q5mask0F<>+24(SB)/8, $0x0F0F0F0F0F0F0F0F
GLOBL q5mask0F<>(SB), RODATA|NOPTR, $32

// Byte k of the broadcast qh dword: byte k/8 of it.
DATA q5shuf<>+0(SB)/8, $0x0000000000000000
DATA q5shuf<>+8(SB)/8, $0x0101010101010101
DATA q5shuf<>+16(SB)/8, $0x0202020202020202
DATA q5shuf<>+24(SB)/8, $0x0303030303030303
GLOBL q5shuf<>(SB), RODATA|NOPTR, $32

// Byte k: all bits but bit k%8, so OR then compare with all-ones tests it.
DATA q5bits<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
DATA q5bits<>+8(SB)/8, $0x7fbfdfeff7fbfdfe
DATA q5bits<>+16(SB)/8, $0x7fbfdfeff7fbfdfe
DATA q5bits<>+24(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL q5bits<>(SB), RODATA|NOPTR, $32

DATA q5maskF0<>+0(SB)/8, $0xF0F0F0F0F0F0F0F0
DATA q5maskF0<>+8(SB)/8, $0xF0F0F0F0F0F0F0F0
DATA q5maskF0<>+16(SB)/8, $0xF0F0F0F0F0F0F0F0
DATA q5maskF0<>+24(SB)/8, $0xF0F0F0F0F0F0F0F0
GLOBL q5maskF0<>(SB), RODATA|NOPTR, $32

DATA q5mask10<>+0(SB)/8, $0x1010101010101010
DATA q5mask10<>+8(SB)/8, $0x1010101010101010
DATA q5mask10<>+16(SB)/8, $0x1010101010101010
DATA q5mask10<>+24(SB)/8, $0x1010101010101010
GLOBL q5mask10<>(SB), RODATA|NOPTR, $32

DATA q5ones16<>+0(SB)/8, $0x0001000100010001
DATA q5ones16<>+8(SB)/8, $0x0001000100010001
DATA q5ones16<>+16(SB)/8, $0x0001000100010001
DATA q5ones16<>+24(SB)/8, $0x0001000100010001
GLOBL q5ones16<>(SB), RODATA|NOPTR, $32

// Y15 = 0x0F bytes, Y14 = qh shuffle, Y13 = bit selectors, Y12 = all
// ones, Y11 = 0xF0 (Q5_0) or 0x10 (Q5_1) bytes, Y10 = 0x0001 words.
#define Q5_CONSTS(hi) \
	VMOVDQU q5mask0F<>(SB), Y15; \
	VMOVDQU q5shuf<>(SB), Y14; \
	VMOVDQU q5bits<>(SB), Y13; \
	VPCMPEQB Y12, Y12, Y12; \
	VMOVDQU hi(SB), Y11; \
	VMOVDQU q5ones16<>(SB), Y10

// NIBBLES: the 16 bytes at qs as 32 unsigned nibbles in Y1 (elements
// 0..15 from the low nibbles, 16..31 from the high ones).
#define NIBBLES(qs) \
	VMOVDQU qs, X1; \
	VPSRLW $4, X1, X2; \
	VINSERTI128 $1, X2, Y1, Y1; \
	VPAND Y15, Y1, Y1

// QHBYTES: byte k of Y2 is 0xFF where bit k of the dword at qh is set.
#define QHBYTES(qh) \
	VPBROADCASTD qh, Y2; \
	VPSHUFB Y14, Y2, Y2; \
	VPOR Y13, Y2, Y2; \
	VPCMPEQB Y12, Y2, Y2

// HSUM8 folds the 8 lanes of Y0 as hsum_float_8 into X0 lane 0:
// (l0+l4)+(l2+l6) + (l1+l5)+(l3+l7), in that pairing.
#define HSUM8 \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0; \
	VMOVHLPS X0, X0, X1; \
	VADDPS X1, X0, X0; \
	VMOVSHDUP X0, X1; \
	VADDSS X1, X0, X0

// HALVES: the f16 at a and b as float32 in all 8 lanes of ya and yb.
#define HALVES(a, b, xa, ya, xb, yb) \
	VPBROADCASTW a, xa; \
	VCVTPH2PS xa, ya; \
	VPBROADCASTW b, xb; \
	VCVTPH2PS xb, yb

// func q4_1q8_1AVX2(w, x *byte, nb int) float32
TEXT ·q4_1q8_1AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VMOVDQU q5mask0F<>(SB), Y15
	VMOVDQU q5ones16<>(SB), Y10
	VXORPS X0, X0, X0
q41loop:
	NIBBLES(4(SI))
	VPMADDUBSW 4(DI), Y1, Y5
	VPMADDWD Y10, Y5, Y5
	VEXTRACTI128 $1, Y5, X6
	VPADDD X6, X5, X5
	VPSHUFD $0x4E, X5, X6
	VPADDD X6, X5, X5
	VPSHUFD $0xB1, X5, X6
	VPADDD X6, X5, X5
	VCVTDQ2PS X5, X5
	HALVES((SI), (DI), X4, X4, X6, X6)
	VMULSS X6, X4, X4
	VFMADD231SS X5, X4, X0
	HALVES(2(SI), 2(DI), X7, X7, X8, X8)
	VFMADD231SS X8, X7, X0
	ADDQ $20, SI
	ADDQ $36, DI
	DECQ CX
	JNZ  q41loop
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func q5_0q8_0AVX2(w, x *byte, nb int) float32
TEXT ·q5_0q8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	Q5_CONSTS(q5maskF0<>)
	VXORPS Y0, Y0, Y0
q50loop:
	NIBBLES(6(SI))
	QHBYTES(2(SI))
	VPANDN Y11, Y2, Y2 // 0xF0 where the bit is clear: nibble − 16
	VPOR Y2, Y1, Y1
	VPSIGNB Y1, Y1, Y3
	VMOVDQU 2(DI), Y5
	VPSIGNB Y1, Y5, Y5
	VPMADDUBSW Y5, Y3, Y5
	VPMADDWD Y10, Y5, Y5
	VCVTDQ2PS Y5, Y5
	HALVES((SI), (DI), X4, Y4, X6, Y6)
	VMULPS Y6, Y4, Y4
	VFMADD231PS Y5, Y4, Y0
	ADDQ $22, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q50loop
	HSUM8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func q5_1q8_1AVX2(w, x *byte, nb int) float32
TEXT ·q5_1q8_1AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	Q5_CONSTS(q5mask10<>)
	VXORPS Y0, Y0, Y0
	VXORPS X9, X9, X9
q51loop:
	HALVES(2(SI), 2(DI), X7, X7, X8, X8)
	VFMADD231SS X8, X7, X9
	NIBBLES(8(SI))
	QHBYTES(4(SI))
	VPAND Y11, Y2, Y2 // 0x10 where the bit is set
	VPOR Y2, Y1, Y1
	VPMADDUBSW 4(DI), Y1, Y5
	VPMADDWD Y10, Y5, Y5
	VCVTDQ2PS Y5, Y5
	HALVES((SI), (DI), X4, Y4, X6, Y6)
	VMULPS Y6, Y4, Y4
	VFMADD231PS Y5, Y4, Y0
	ADDQ $24, SI
	ADDQ $36, DI
	DECQ CX
	JNZ  q51loop
	HSUM8
	VADDSS X9, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// ------------------------------------------------------ four-token forms
//
// One weight row against four tokens at DI, DI+R8, DI+2·R8, DI+R9: the
// weight block unpacked once for the four, every token's float state kept
// apart (Q5_0/Q5_1: its own 8 lanes; Q4_1: lane k of one XMM register) and
// updated with the one-token kernel's operations, so each result is
// bit-identical to the one-token kernel's.

// HSUM8TO: hsum_float_8 of acc (X1, X2 clobbered) stored at dst.
#define HSUM8TO(acc, xacc, dst) \
	VEXTRACTF128 $1, acc, X1; \
	VADDPS X1, xacc, X2; \
	VMOVHLPS X2, X2, X1; \
	VADDPS X1, X2, X2; \
	VMOVSHDUP X2, X1; \
	VADDSS X1, X2, X2; \
	VMOVSS X2, dst

// Q50_TOK: token at base (its quants at q): acc = fma(d_w·d_x, lanes of Σ w·y, acc), with
// the signed weights in Y1, |w| in Y3 and d_w (all lanes) in Y9.
#define Q50_TOK(q, base, acc) \
	VMOVDQU q, Y2; \
	VPSIGNB Y1, Y2, Y2; \
	VPMADDUBSW Y2, Y3, Y2; \
	VPMADDWD Y10, Y2, Y2; \
	VCVTDQ2PS Y2, Y2; \
	VPBROADCASTW base, X8; \
	VCVTPH2PS X8, Y8; \
	VMULPS Y8, Y9, Y4; \
	VFMADD231PS Y2, Y4, acc

// func q5_0q8_0x4AVX2(w, x *byte, stride, nb int, out *[4]float32)
TEXT ·q5_0q8_0x4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	Q5_CONSTS(q5maskF0<>)
	VXORPS Y0, Y0, Y0
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
q50x4loop:
	NIBBLES(6(SI))
	QHBYTES(2(SI))
	VPANDN Y11, Y2, Y2
	VPOR Y2, Y1, Y1
	VPSIGNB Y1, Y1, Y3
	VPBROADCASTW (SI), X9
	VCVTPH2PS X9, Y9
	Q50_TOK(2(DI), (DI), Y0)
	Q50_TOK(2(DI)(R8*1), (DI)(R8*1), Y5)
	Q50_TOK(2(DI)(R8*2), (DI)(R8*2), Y6)
	Q50_TOK(2(DI)(R9*1), (DI)(R9*1), Y7)
	ADDQ $22, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q50x4loop
	MOVQ out+32(FP), DX
	HSUM8TO(Y0, X0, 0(DX))
	HSUM8TO(Y5, X5, 4(DX))
	HSUM8TO(Y6, X6, 8(DX))
	HSUM8TO(Y7, X7, 12(DX))
	VZEROUPPER
	RET

// Q51_TOK: token at base (a Q8_1 block, its quants at q): acc = fma(d_w·d_x, lanes of
// Σ w·y, acc), the unsigned weights in Y1, d_w in Y9.
#define Q51_TOK(q, base, acc) \
	VPMADDUBSW q, Y1, Y2; \
	VPMADDWD Y10, Y2, Y2; \
	VCVTDQ2PS Y2, Y2; \
	VPBROADCASTW base, X8; \
	VCVTPH2PS X8, Y8; \
	VMULPS Y8, Y9, Y4; \
	VFMADD231PS Y2, Y4, acc

// S4: the four tokens' s_x halves (offset 2 of their blocks) as float32
// in the lanes of X2.
#define S4 \
	MOVWLZX 2(DI), AX; \
	VMOVD AX, X2; \
	VPINSRW $1, 2(DI)(R8*1), X2, X2; \
	VPINSRW $2, 2(DI)(R8*2), X2, X2; \
	VPINSRW $3, 2(DI)(R9*1), X2, X2; \
	VCVTPH2PS X2, X2

// func q5_1q8_1x4AVX2(w, x *byte, stride, nb int, out *[4]float32)
TEXT ·q5_1q8_1x4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	Q5_CONSTS(q5mask10<>)
	VXORPS Y0, Y0, Y0
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS X3, X3, X3 // the four summs chains
q51x4loop:
	// summs_k = fma(m_w, s_x(k), summs_k), lane-wise.
	S4
	VPBROADCASTW 2(SI), X4
	VCVTPH2PS X4, X4
	VFMADD231PS X2, X4, X3
	NIBBLES(8(SI))
	QHBYTES(4(SI))
	VPAND Y11, Y2, Y2
	VPOR Y2, Y1, Y1
	VPBROADCASTW (SI), X9
	VCVTPH2PS X9, Y9
	Q51_TOK(4(DI), (DI), Y0)
	Q51_TOK(4(DI)(R8*1), (DI)(R8*1), Y5)
	Q51_TOK(4(DI)(R8*2), (DI)(R8*2), Y6)
	Q51_TOK(4(DI)(R9*1), (DI)(R9*1), Y7)
	ADDQ $24, SI
	ADDQ $36, DI
	DECQ CX
	JNZ  q51x4loop
	// hsum8 per token, plus its summs.
	MOVQ out+32(FP), DX
	HSUM8TO(Y0, X0, 0(DX))
	HSUM8TO(Y5, X5, 4(DX))
	HSUM8TO(Y6, X6, 8(DX))
	HSUM8TO(Y7, X7, 12(DX))
	VMOVUPS (DX), X0
	VADDPS X3, X0, X0
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// Q41_LANES: a token's quants at q: 8 int32 lanes of Σ nibble·y into out.
#define Q41_LANES(q, out) \
	VPMADDUBSW q, Y1, out; \
	VPMADDWD Y10, out, out

// func q4_1q8_1x4AVX2(w, x *byte, stride, nb int, out *[4]float32)
// The four tokens' scalar chains in the lanes of X0:
// acc = fma(d_w·d_x, sumi, acc), then acc = fma(m_w, s_x, acc).
TEXT ·q4_1q8_1x4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	VMOVDQU q5mask0F<>(SB), Y15
	VMOVDQU q5ones16<>(SB), Y10
	VXORPS X0, X0, X0
q41x4loop:
	NIBBLES(4(SI))
	Q41_LANES(4(DI), Y5)
	Q41_LANES(4(DI)(R8*1), Y6)
	Q41_LANES(4(DI)(R8*2), Y7)
	Q41_LANES(4(DI)(R9*1), Y8)
	VPHADDD Y6, Y5, Y5
	VPHADDD Y8, Y7, Y7
	VPHADDD Y7, Y5, Y5
	VEXTRACTI128 $1, Y5, X6
	VPADDD X6, X5, X5
	VCVTDQ2PS X5, X5 // sumi per token
	MOVWLZX (DI), AX
	VMOVD AX, X6
	VPINSRW $1, (DI)(R8*1), X6, X6
	VPINSRW $2, (DI)(R8*2), X6, X6
	VPINSRW $3, (DI)(R9*1), X6, X6
	VCVTPH2PS X6, X6 // d_x per token
	VPBROADCASTW (SI), X4
	VCVTPH2PS X4, X4
	VMULPS X6, X4, X4 // d_w·d_x
	VFMADD231PS X5, X4, X0
	S4
	VPBROADCASTW 2(SI), X7
	VCVTPH2PS X7, X7
	VFMADD231PS X2, X7, X0
	ADDQ $20, SI
	ADDQ $36, DI
	DECQ CX
	JNZ  q41x4loop
	MOVQ out+32(FP), DX
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET
