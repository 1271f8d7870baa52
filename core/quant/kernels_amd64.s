//go:build !noasm

#include "textflag.h"

// AVX2 + F16C twins of the block dot products and activation quantizers in
// kernels_generic.go / quantize_row.go. Integer block sums are exact; float
// steps (f16 widening, d_w·d_x, lane updates, the final reduction) are the
// generic bodies' own, one IEEE operation each, so results are bit-identical
// to the generic twins. Callers (kernels_amd64.go) pass whole blocks only.

// Register constants shared by the 32-wide kernels:
//   Y15 = 0x0F bytes, Y14 = 0x08 bytes, Y13 = 0x0001 words.
#define CONSTS_Q4 \
	MOVL $0x0F0F0F0F, AX; VMOVQ AX, X15; VPBROADCASTD X15, Y15; \
	MOVL $0x08080808, AX; VMOVQ AX, X14; VPBROADCASTD X14, Y14; \
	MOVL $0x00010001, AX; VMOVQ AX, X13; VPBROADCASTD X13, Y13

// HSUM8 folds the 8 float32 lanes of Y(acc) like hsum8 in Go:
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), result in the low lane of X(acc).
#define HSUM8(acc, xacc, xt) \
	VEXTRACTF128 $1, acc, xt; \
	VADDPS xt, xacc, xacc; \
	VMOVHLPS xacc, xacc, xt; \
	VADDPS xt, xacc, xacc; \
	VMOVSHDUP xacc, xt; \
	VADDSS xt, xacc, xacc

// HSUMI32 adds the 8 int32 lanes of Y(acc) (exact), result in X(acc) lane 0.
#define HSUMI32(acc, xacc, xt) \
	VEXTRACTI128 $1, acc, xt; \
	VPADDD xt, xacc, xacc; \
	VPSHUFD $0x4E, xacc, xt; \
	VPADDD xt, xacc, xacc; \
	VPSHUFD $0xB1, xacc, xt; \
	VPADDD xt, xacc, xacc

// Q4_0 unpack: 16 bytes at off(SI) -> Y(w) signed (nibble-8), elements
// 0..15 from low nibbles then 16..31 from high ones; Y(aw) = |w|.
#define UNPACK_Q4_0(w, xw, tmp, xtmp, aw) \
	VMOVDQU 2(SI), xw; \
	VPSRLW $4, xw, xtmp; \
	VINSERTI128 $1, xtmp, w, w; \
	VPAND Y15, w, w; \
	VPSUBB Y14, w, w; \
	VPSIGNB w, w, aw

// One token's block: lanes of Σ w·y over 4 bytes each, scaled by dw·dy,
// added to acc. y block at (yaddr) (d f16 then 32 int8); Y(w) signed
// weights, Y(aw) = |w|, Y4 = dw broadcast.
#define TOKEN_Q8(ydq, yqs, acc, t1, t2, xt2) \
	VMOVDQU yqs, t1; \
	VPSIGNB Y1, t1, t1; \
	VPMADDUBSW t1, Y3, t1; \
	VPMADDWD Y13, t1, t1; \
	VCVTDQ2PS t1, t1; \
	VPBROADCASTW ydq, xt2; \
	VCVTPH2PS xt2, t2; \
	VMULPS t2, Y4, t2; \
	VMULPS t2, t1, t1; \
	VADDPS t1, acc, acc

// func q4_0q8_0AVX2(w, x *byte, nb int) float32
TEXT ·q4_0q8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	CONSTS_Q4
	VXORPS Y0, Y0, Y0
q40loop:
	UNPACK_Q4_0(Y1, X1, Y2, X2, Y3)
	VPBROADCASTW (SI), X4
	VCVTPH2PS X4, Y4
	TOKEN_Q8((DI), 2(DI), Y0, Y5, Y6, X6)
	ADDQ $18, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q40loop
	HSUM8(Y0, X0, X1)
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
	VXORPS Y0, Y0, Y0
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
q40x4loop:
	UNPACK_Q4_0(Y1, X1, Y2, X2, Y3)
	VPBROADCASTW (SI), X4
	VCVTPH2PS X4, Y4
	TOKEN_Q8((DI), 2(DI), Y0, Y5, Y6, X6)
	TOKEN_Q8((DI)(R8*1), 2(DI)(R8*1), Y7, Y10, Y11, X11)
	TOKEN_Q8((DI)(R8*2), 2(DI)(R8*2), Y8, Y5, Y6, X6)
	TOKEN_Q8((DI)(R9*1), 2(DI)(R9*1), Y9, Y10, Y11, X11)
	ADDQ $18, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q40x4loop
	MOVQ out+32(FP), DX
	HSUM8(Y0, X0, X1)
	MOVSS X0, 0(DX)
	HSUM8(Y7, X7, X1)
	MOVSS X7, 4(DX)
	HSUM8(Y8, X8, X1)
	MOVSS X8, 8(DX)
	HSUM8(Y9, X9, X1)
	MOVSS X9, 12(DX)
	VZEROUPPER
	RET

// func q8_0q8_0AVX2(w, x *byte, nb int) float32
TEXT ·q8_0q8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	CONSTS_Q4
	VXORPS Y0, Y0, Y0
q80loop:
	VMOVDQU 2(SI), Y1
	VPSIGNB Y1, Y1, Y3
	VPBROADCASTW (SI), X4
	VCVTPH2PS X4, Y4
	TOKEN_Q8((DI), 2(DI), Y0, Y5, Y6, X6)
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q80loop
	HSUM8(Y0, X0, X1)
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
	VXORPS Y0, Y0, Y0
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
q80x4loop:
	VMOVDQU 2(SI), Y1
	VPSIGNB Y1, Y1, Y3
	VPBROADCASTW (SI), X4
	VCVTPH2PS X4, Y4
	TOKEN_Q8((DI), 2(DI), Y0, Y5, Y6, X6)
	TOKEN_Q8((DI)(R8*1), 2(DI)(R8*1), Y7, Y10, Y11, X11)
	TOKEN_Q8((DI)(R8*2), 2(DI)(R8*2), Y8, Y5, Y6, X6)
	TOKEN_Q8((DI)(R9*1), 2(DI)(R9*1), Y9, Y10, Y11, X11)
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q80x4loop
	MOVQ out+32(FP), DX
	HSUM8(Y0, X0, X1)
	MOVSS X0, 0(DX)
	HSUM8(Y7, X7, X1)
	MOVSS X7, 4(DX)
	HSUM8(Y8, X8, X1)
	MOVSS X8, 8(DX)
	HSUM8(Y9, X9, X1)
	MOVSS X9, 12(DX)
	VZEROUPPER
	RET
