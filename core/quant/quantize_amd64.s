//go:build !noasm

#include "textflag.h"

// AVX2 twins of the Q8_0 and Q8_K activation quantizers (quantize_row.go),
// byte-identical to the generic bodies: the same float32 operations
// (abs-max with NaNs skipped, one division, one multiply per element), the
// same integer rounding and saturation.

DATA qperm<>+0(SB)/4, $0
DATA qperm<>+4(SB)/4, $4
DATA qperm<>+8(SB)/4, $1
DATA qperm<>+12(SB)/4, $5
DATA qperm<>+16(SB)/4, $2
DATA qperm<>+20(SB)/4, $6
DATA qperm<>+24(SB)/4, $3
DATA qperm<>+28(SB)/4, $7
GLOBL qperm<>(SB), RODATA|NOPTR, $32

// BCAST32(imm, y) puts the 32-bit pattern imm in every lane of y.
#define BCAST32(imm, x, y) \
	MOVL imm, AX; VMOVQ AX, x; VPBROADCASTD x, y

// HMAX8: max of the 8 lanes of Y(v) (no NaNs) into X(v) lane 0.
#define HMAX8(v, xv, xt) \
	VEXTRACTF128 $1, v, xt; \
	VMAXPS xt, xv, xv; \
	VMOVHLPS xv, xv, xt; \
	VMAXPS xt, xv, xv; \
	VMOVSHDUP xv, xt; \
	VMAXSS xt, xv, xv

// PACK4 packs the int32 lanes of Y0, Y1, Y2, Y4 (elements 0..7, 8..15,
// 16..23, 24..31) into 32 bytes in element order in Y0.
#define PACK4(packd, packw) \
	packd Y1, Y0, Y0; \
	packd Y4, Y2, Y2; \
	packw Y2, Y0, Y0; \
	VPERMD Y0, Y14, Y0

// func quantQ8_0AVX2(src *float32, dst *byte, nb int)
TEXT ·quantQ8_0AVX2(SB), NOSPLIT, $0-24
	MOVQ src+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ nb+16(FP), CX
	BCAST32($0x7fffffff, X15, Y15)
	VMOVDQU qperm<>(SB), Y14
	MOVL $0x42fe0000, AX // 127.0
	VMOVQ AX, X13
q80qloop:
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y4
	VXORPS Y5, Y5, Y5
	// max(|v|, acc) with |v| first: a NaN |v| leaves acc.
	VANDPS Y15, Y0, Y6
	VMAXPS Y5, Y6, Y5
	VANDPS Y15, Y1, Y6
	VMAXPS Y5, Y6, Y5
	VANDPS Y15, Y2, Y6
	VMAXPS Y5, Y6, Y5
	VANDPS Y15, Y4, Y6
	VMAXPS Y5, Y6, Y5
	HMAX8(Y5, X5, X6)
	VDIVSS X13, X5, X6 // d = amax/127
	VCVTPS2PH $0, X6, X6
	VPEXTRW $0, X6, AX
	MOVW AX, 0(DI)
	VXORPS X6, X6, X6
	VUCOMISS X6, X5
	JEQ  q80qzero
	VDIVSS X5, X13, X6 // id = 127/amax
q80qzero:
	VBROADCASTSS X6, Y6
	VMULPS Y6, Y0, Y0
	VMULPS Y6, Y1, Y1
	VMULPS Y6, Y2, Y2
	VMULPS Y6, Y4, Y4
	VROUNDPS $0, Y0, Y0
	VROUNDPS $0, Y1, Y1
	VROUNDPS $0, Y2, Y2
	VROUNDPS $0, Y4, Y4
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y4, Y4
	PACK4(VPACKSSDW, VPACKSSWB)
	VMOVDQU Y0, 2(DI)
	ADDQ $128, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q80qloop
	VZEROUPPER
	RET

// QK_ONE: q = min(127, nearest_int(iscale·v)) & 0xff for the 8 floats at
// mem into y: the product, the 1.5·2²³ add and the mantissa bits as in
// nearestInt, then the clamp and the low byte (the generic int8 cast).
#define QK_ONE(mem, y) \
	VMULPS mem, Y3, y; \
	VADDPS Y13, y, y; \
	VPAND Y12, y, y; \
	VPSUBD Y11, y, y; \
	VPMINSD Y10, y, y; \
	VPAND Y9, y, y

// QK_BSUM: Σ of each 4 int8 of the 32 bytes at mem, as 8 int32, into y.
#define QK_BSUM(mem, y) \
	VMOVDQU mem, y; \
	VPMADDUBSW y, Y8, y; \
	VPMADDWD Y7, y, y

// func quantQ8_KAVX2(src *float32, dst *byte, nb int)
TEXT ·quantQ8_KAVX2(SB), NOSPLIT, $0-24
	MOVQ src+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ nb+16(FP), CX
	BCAST32($0x7fffffff, X15, Y15)
	VMOVDQU qperm<>(SB), Y14
	BCAST32($0x4b400000, X13, Y13) // 12582912.0
	BCAST32($0x007fffff, X12, Y12)
	BCAST32($0x00400000, X11, Y11)
	BCAST32($127, X10, Y10)
	BCAST32($0xff, X9, Y9)
	BCAST32($0x01010101, X8, Y8)
	BCAST32($0x00010001, X7, Y7)
q8kloop:
	// amax, NaNs skipped.
	VXORPS Y0, Y0, Y0
	XORQ BX, BX
q8kmax:
	VANDPS (SI)(BX*4), Y15, Y1
	VMAXPS Y0, Y1, Y0
	ADDQ $8, BX
	CMPQ BX, $256
	JLT  q8kmax
	HMAX8(Y0, X0, X1)
	VXORPS X1, X1, X1
	VUCOMISS X1, X0
	JEQ  q8kzero
	// The first element whose |x| is amax is the signed maximum.
	VBROADCASTSS X0, Y1
	XORQ BX, BX
q8kfind:
	VANDPS (SI)(BX*4), Y15, Y2
	VCMPPS $0, Y1, Y2, Y2
	VMOVMSKPS Y2, AX
	TESTL AX, AX
	JNZ  q8kfound
	ADDQ $8, BX
	JMP  q8kfind
q8kfound:
	BSFL AX, AX
	ADDQ BX, AX
	VMOVSS (SI)(AX*4), X2
	MOVL $0xc2fe0000, AX // -127.0
	VMOVQ AX, X3
	VDIVSS X2, X3, X3 // iscale = -127/max
	MOVL $0x3f800000, AX // 1.0
	VMOVQ AX, X4
	VDIVSS X3, X4, X4 // d = 1/iscale
	VMOVSS X4, 0(DI)
	VBROADCASTSS X3, Y3
	XORQ BX, BX
	LEAQ 4(DI), R8
q8kquant:
	QK_ONE(0(SI)(BX*4), Y0)
	QK_ONE(32(SI)(BX*4), Y1)
	QK_ONE(64(SI)(BX*4), Y2)
	QK_ONE(96(SI)(BX*4), Y4)
	PACK4(VPACKUSDW, VPACKUSWB)
	VMOVDQU Y0, (R8)
	ADDQ $32, R8
	ADDQ $32, BX
	CMPQ BX, $256
	JLT  q8kquant
	// bsums: sums of 16, for sub-blocks 0..7 then 8..15.
	QK_BSUM(4(DI), Y0)
	QK_BSUM(36(DI), Y1)
	QK_BSUM(68(DI), Y2)
	QK_BSUM(100(DI), Y4)
	VPHADDD Y1, Y0, Y0
	VPHADDD Y4, Y2, Y2
	VPHADDD Y2, Y0, Y0
	VPERMD Y0, Y14, Y0
	VEXTRACTI128 $1, Y0, X1
	VPACKSSDW X1, X0, X0
	VMOVDQU X0, 260(DI)
	QK_BSUM(132(DI), Y0)
	QK_BSUM(164(DI), Y1)
	QK_BSUM(196(DI), Y2)
	QK_BSUM(228(DI), Y4)
	VPHADDD Y1, Y0, Y0
	VPHADDD Y4, Y2, Y2
	VPHADDD Y2, Y0, Y0
	VPERMD Y0, Y14, Y0
	VEXTRACTI128 $1, Y0, X1
	VPACKSSDW X1, X0, X0
	VMOVDQU X0, 276(DI)
	JMP  q8knext
q8kzero:
	VPXOR Y0, Y0, Y0
	VMOVDQU Y0, 0(DI)
	VMOVDQU Y0, 32(DI)
	VMOVDQU Y0, 64(DI)
	VMOVDQU Y0, 96(DI)
	VMOVDQU Y0, 128(DI)
	VMOVDQU Y0, 160(DI)
	VMOVDQU Y0, 192(DI)
	VMOVDQU Y0, 224(DI)
	VMOVDQU Y0, 256(DI)
	MOVL $0, 288(DI)
q8knext:
	ADDQ $1024, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q8kloop
	VZEROUPPER
	RET
