//go:build !noasm

#include "textflag.h"

// AVX2 + F16C twins of the Q4_0 and Q8_0 × Q8_0 dot products
// (kernels_generic.go). Those follow the reference build block by block:
// per block an exact integer sum, then one float32 update of the running
// sum (Q4_0: sum += sumi·(d_w·d_x); Q8_0: sum = fma(sumi, d_w·d_x, sum)).
// The kernels keep that order exactly: the one-token form reduces each
// block's integer lanes to a scalar; the four-token form puts the four
// tokens' running sums in the lanes of one XMM register, each lane doing
// the scalar sequence, so results are bit-identical to the generic twins.

// Register constants: Y15 = 0x0F bytes, Y14 = 0x08 bytes, Y13 = 0x0001 words.
#define CONSTS_Q4 \
	MOVL $0x0F0F0F0F, AX; VMOVQ AX, X15; VPBROADCASTD X15, Y15; \
	MOVL $0x08080808, AX; VMOVQ AX, X14; VPBROADCASTD X14, Y14; \
	MOVL $0x00010001, AX; VMOVQ AX, X13; VPBROADCASTD X13, Y13

// HSUMI32 adds the 8 int32 lanes of Y(acc) (exact) into X(acc) lane 0.
#define HSUMI32(acc, xacc, xt) \
	VEXTRACTI128 $1, acc, xt; \
	VPADDD xt, xacc, xacc; \
	VPSHUFD $0x4E, xacc, xt; \
	VPADDD xt, xacc, xacc; \
	VPSHUFD $0xB1, xacc, xt; \
	VPADDD xt, xacc, xacc

// UNPACK_Q4_0: the block at SI as signed bytes in Y1 (nibble − 8; elements
// 0..15 from the low nibbles, 16..31 from the high ones), |w| in Y3.
#define UNPACK_Q4_0 \
	VMOVDQU 2(SI), X1; \
	VPSRLW $4, X1, X2; \
	VINSERTI128 $1, X2, Y1, Y1; \
	VPAND Y15, Y1, Y1; \
	VPSUBB Y14, Y1, Y1; \
	VPSIGNB Y1, Y1, Y3

// UNPACK_Q8_0: the block's int8 quants in Y1, |w| in Y3.
#define UNPACK_Q8_0 \
	VMOVDQU 2(SI), Y1; \
	VPSIGNB Y1, Y1, Y3

// LANES: 8 int32 lanes of Σ w·y (4 products each, exact) for the 32
// activation quants at yqs, into out. The sign trick needs y ≠ −128, which
// the Q8_0 quantizer guarantees.
#define LANES(yqs, out) \
	VMOVDQU yqs, out; \
	VPSIGNB Y1, out, out; \
	VPMADDUBSW out, Y3, out; \
	VPMADDWD Y13, out, out

// BLOCK1: one token's block: the scalar sumi in X5 (as float32) and
// d_w·d_x in X4.
#define BLOCK1 \
	LANES(2(DI), Y5); \
	HSUMI32(Y5, X5, X6); \
	VCVTDQ2PS X5, X5; \
	VPBROADCASTW (SI), X4; \
	VCVTPH2PS X4, X4; \
	VPBROADCASTW (DI), X6; \
	VCVTPH2PS X6, X6; \
	VMULSS X6, X4, X4

// BLOCK4: four tokens' blocks (at DI, DI+R8, DI+2·R8, DI+R9): their sumi
// as float32 in the lanes of X5, d_w·d_x per token in the lanes of X4.
#define BLOCK4 \
	LANES(2(DI), Y5); \
	LANES(2(DI)(R8*1), Y6); \
	LANES(2(DI)(R8*2), Y7); \
	LANES(2(DI)(R9*1), Y8); \
	VPHADDD Y6, Y5, Y5; \
	VPHADDD Y8, Y7, Y7; \
	VPHADDD Y7, Y5, Y5; \
	VEXTRACTI128 $1, Y5, X6; \
	VPADDD X6, X5, X5; \
	VCVTDQ2PS X5, X5; \
	MOVWLZX (DI), AX; \
	VMOVD AX, X6; \
	VPINSRW $1, (DI)(R8*1), X6, X6; \
	VPINSRW $2, (DI)(R8*2), X6, X6; \
	VPINSRW $3, (DI)(R9*1), X6, X6; \
	VCVTPH2PS X6, X6; \
	VPBROADCASTW (SI), X4; \
	VCVTPH2PS X4, X4; \
	VMULPS X6, X4, X4

// func q4_0q8_0AVX2(w, x *byte, nb int) float32
TEXT ·q4_0q8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	CONSTS_Q4
	VXORPS X0, X0, X0
q40loop:
	UNPACK_Q4_0
	BLOCK1
	VMULSS X4, X5, X5
	VADDSS X5, X0, X0
	ADDQ $18, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q40loop
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func q4_0q8_0x4AVX2(w, x *byte, stride, nb int, out *[4]float32)
TEXT ·q4_0q8_0x4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	CONSTS_Q4
	VXORPS X0, X0, X0
q40x4loop:
	UNPACK_Q4_0
	BLOCK4
	VMULPS X4, X5, X5
	VADDPS X5, X0, X0
	ADDQ $18, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q40x4loop
	MOVQ out+32(FP), DX
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func q8_0q8_0AVX2(w, x *byte, nb int) float32
TEXT ·q8_0q8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	CONSTS_Q4
	VXORPS X0, X0, X0
q80loop:
	UNPACK_Q8_0
	BLOCK1
	VFMADD231SS X4, X5, X0
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q80loop
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func q8_0q8_0x4AVX2(w, x *byte, stride, nb int, out *[4]float32)
TEXT ·q8_0q8_0x4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	CONSTS_Q4
	VXORPS X0, X0, X0
q80x4loop:
	UNPACK_Q8_0
	BLOCK4
	VFMADD231PS X4, X5, X0
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q80x4loop
	MOVQ out+32(FP), DX
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// Four weight rows (at SI, SI+R8, SI+2·R8, SI+R9) against one token: the
// rows' running sums in the lanes of X0, each lane the scalar sequence.

// ROWLANES: 8 int32 lanes of Σ w·y for the row block whose quants are in
// Y1 (signed) against the token's quants in Y12, into out.
#define ROWLANES(out) \
	VPSIGNB Y1, Y1, Y3; \
	VPSIGNB Y1, Y12, out; \
	VPMADDUBSW out, Y3, out; \
	VPMADDWD Y13, out, out

#define LOAD_Q4_0_AT(qs) \
	VMOVDQU qs, X1; \
	VPSRLW $4, X1, X2; \
	VINSERTI128 $1, X2, Y1, Y1; \
	VPAND Y15, Y1, Y1; \
	VPSUBB Y14, Y1, Y1

#define LOAD_Q8_0_AT(qs) \
	VMOVDQU qs, Y1

// ROWS4: after the four rows' lanes are in Y5..Y8: their sumi as float32
// in X5's lanes, d_w·d_x per row in X4's.
#define ROWS4 \
	VPHADDD Y6, Y5, Y5; \
	VPHADDD Y8, Y7, Y7; \
	VPHADDD Y7, Y5, Y5; \
	VEXTRACTI128 $1, Y5, X6; \
	VPADDD X6, X5, X5; \
	VCVTDQ2PS X5, X5; \
	MOVWLZX (SI), AX; \
	VMOVD AX, X6; \
	VPINSRW $1, (SI)(R8*1), X6, X6; \
	VPINSRW $2, (SI)(R8*2), X6, X6; \
	VPINSRW $3, (SI)(R9*1), X6, X6; \
	VCVTPH2PS X6, X6; \
	VPBROADCASTW (DI), X4; \
	VCVTPH2PS X4, X4; \
	VMULPS X4, X6, X4

// func q4_0q8_0r4AVX2(w *byte, wstride int, x *byte, nb int, out *[4]float32)
TEXT ·q4_0q8_0r4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	CONSTS_Q4
	VXORPS X0, X0, X0
q40r4loop:
	VMOVDQU 2(DI), Y12
	LOAD_Q4_0_AT(2(SI))
	ROWLANES(Y5)
	LOAD_Q4_0_AT(2(SI)(R8*1))
	ROWLANES(Y6)
	LOAD_Q4_0_AT(2(SI)(R8*2))
	ROWLANES(Y7)
	LOAD_Q4_0_AT(2(SI)(R9*1))
	ROWLANES(Y8)
	ROWS4
	VMULPS X4, X5, X5
	VADDPS X5, X0, X0
	ADDQ $18, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q40r4loop
	MOVQ out+32(FP), DX
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func q8_0q8_0r4AVX2(w *byte, wstride int, x *byte, nb int, out *[4]float32)
TEXT ·q8_0q8_0r4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R9)(R9*1), R11
	LEAQ (R10)(R8*2), R12
	CONSTS_Q4
	VXORPS X0, X0, X0
	LEAQ (SI)(R8*4), R13 // the next four rows, as one sequential stream
q80r4loop:
	PREFETCHT0 0(R13)
	PREFETCHT0 64(R13)
	PREFETCHT0 128(R13)
	ADDQ $136, R13
	VMOVDQU 2(DI), Y12
	LOAD_Q8_0_AT(2(SI))
	ROWLANES(Y5)
	LOAD_Q8_0_AT(2(SI)(R8*1))
	ROWLANES(Y6)
	LOAD_Q8_0_AT(2(SI)(R8*2))
	ROWLANES(Y7)
	LOAD_Q8_0_AT(2(SI)(R9*1))
	ROWLANES(Y8)
	ROWS4
	VFMADD231PS X4, X5, X0
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q80r4loop
	MOVQ out+32(FP), DX
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func q4_0q8_0x4tAVX2(w, x *byte, stride, nb int, tab *byte, out *[4]float32)
// The four-token Q4_0 kernel with the tokens' per-block side table (see
// PrepareGroup4): unsigned nibbles against the int8 quants, then 8·Σy
// subtracted per token — Σ(w−8)·y exactly — and d_x read as float32.
TEXT ·q4_0q8_0x4tAVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ nb+24(FP), CX
	MOVQ tab+32(FP), BX
	LEAQ (R8)(R8*2), R9
	CONSTS_Q4
	VXORPS X0, X0, X0
q40x4tloop:
	VMOVDQU 2(SI), X1
	VPSRLW $4, X1, X2
	VINSERTI128 $1, X2, Y1, Y1
	VPAND Y15, Y1, Y1
	VPMADDUBSW 2(DI), Y1, Y5
	VPMADDWD Y13, Y5, Y5
	VPMADDUBSW 2(DI)(R8*1), Y1, Y6
	VPMADDWD Y13, Y6, Y6
	VPMADDUBSW 2(DI)(R8*2), Y1, Y7
	VPMADDWD Y13, Y7, Y7
	VPMADDUBSW 2(DI)(R9*1), Y1, Y8
	VPMADDWD Y13, Y8, Y8
	VPHADDD Y6, Y5, Y5
	VPHADDD Y8, Y7, Y7
	VPHADDD Y7, Y5, Y5
	VEXTRACTI128 $1, Y5, X6
	VPADDD X6, X5, X5
	VPSUBD 16(BX), X5, X5
	VCVTDQ2PS X5, X5
	VPBROADCASTW (SI), X4
	VCVTPH2PS X4, X4
	VMULPS (BX), X4, X4
	VMULPS X4, X5, X5
	VADDPS X5, X0, X0
	ADDQ $18, SI
	ADDQ $34, DI
	ADDQ $32, BX
	DECQ CX
	JNZ  q40x4tloop
	MOVQ out+40(FP), DX
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func q4_0q8_0r4tAVX2(w *byte, wstride int, x *byte, nb int, tab *byte, out *[4]float32)
// The four-row Q4_0 kernel with the token's side table (PrepareToken1):
// unsigned nibbles against the token's quants, 8·Σy subtracted per block.
TEXT ·q4_0q8_0r4tAVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ tab+32(FP), BX
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R9)(R9*1), R11
	LEAQ (R10)(R8*2), R12
	CONSTS_Q4
	VXORPS X0, X0, X0
q40r4tloop:
	// The next four rows' block at this offset, for the caller's next
	// call: the rows are short streams the hardware prefetcher misses.
	PREFETCHT0 2(SI)(R8*4)
	PREFETCHT0 2(SI)(R10*1)
	PREFETCHT0 2(SI)(R11*1)
	PREFETCHT0 2(SI)(R12*1)
	VMOVDQU 2(DI), Y12
	VMOVDQU 2(SI), X1
	VPSRLW $4, X1, X2
	VINSERTI128 $1, X2, Y1, Y1
	VPAND Y15, Y1, Y1
	VPMADDUBSW Y12, Y1, Y5
	VPMADDWD Y13, Y5, Y5
	VMOVDQU 2(SI)(R8*1), X1
	VPSRLW $4, X1, X2
	VINSERTI128 $1, X2, Y1, Y1
	VPAND Y15, Y1, Y1
	VPMADDUBSW Y12, Y1, Y6
	VPMADDWD Y13, Y6, Y6
	VMOVDQU 2(SI)(R8*2), X1
	VPSRLW $4, X1, X2
	VINSERTI128 $1, X2, Y1, Y1
	VPAND Y15, Y1, Y1
	VPMADDUBSW Y12, Y1, Y7
	VPMADDWD Y13, Y7, Y7
	VMOVDQU 2(SI)(R9*1), X1
	VPSRLW $4, X1, X2
	VINSERTI128 $1, X2, Y1, Y1
	VPAND Y15, Y1, Y1
	VPMADDUBSW Y12, Y1, Y8
	VPMADDWD Y13, Y8, Y8
	VPHADDD Y6, Y5, Y5
	VPHADDD Y8, Y7, Y7
	VPHADDD Y7, Y5, Y5
	VEXTRACTI128 $1, Y5, X6
	VPADDD X6, X5, X5
	VPBROADCASTD 4(BX), X6
	VPSUBD X6, X5, X5
	VCVTDQ2PS X5, X5
	MOVWLZX (SI), AX
	VMOVD AX, X6
	VPINSRW $1, (SI)(R8*1), X6, X6
	VPINSRW $2, (SI)(R8*2), X6, X6
	VPINSRW $3, (SI)(R9*1), X6, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS (BX), X4
	VMULPS X4, X6, X4
	VMULPS X4, X5, X5
	VADDPS X5, X0, X0
	ADDQ $18, SI
	ADDQ $34, DI
	ADDQ $8, BX
	DECQ CX
	JNZ  q40r4tloop
	MOVQ out+40(FP), DX
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET
