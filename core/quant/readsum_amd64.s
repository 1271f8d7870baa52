//go:build !noasm

#include "textflag.h"

// ReadSum's lane bodies (readsum.go): eight accumulators of uint64 lanes,
// each iteration one full-width load into each, then a fold of the eight
// and of their lanes. Addition modulo 2⁶⁴ is associative, so the order
// of the fold does not change the sum.

// func readSumAVX2(p *byte, n256 int) uint64
// n256 > 0 iterations of 256 bytes.
TEXT ·readSumAVX2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ n256+8(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
rs2loop:
	VPADDQ 0(SI), Y0, Y0
	VPADDQ 32(SI), Y1, Y1
	VPADDQ 64(SI), Y2, Y2
	VPADDQ 96(SI), Y3, Y3
	VPADDQ 128(SI), Y4, Y4
	VPADDQ 160(SI), Y5, Y5
	VPADDQ 192(SI), Y6, Y6
	VPADDQ 224(SI), Y7, Y7
	ADDQ $256, SI
	DECQ CX
	JNZ  rs2loop
	VPADDQ Y1, Y0, Y0
	VPADDQ Y3, Y2, Y2
	VPADDQ Y5, Y4, Y4
	VPADDQ Y7, Y6, Y6
	VPADDQ Y2, Y0, Y0
	VPADDQ Y6, Y4, Y4
	VPADDQ Y4, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPADDQ X1, X0, X0
	VMOVQ X0, AX
	VZEROUPPER
	MOVQ AX, ret+16(FP)
	RET

// func readSumAVX512(p *byte, n512 int) uint64
// n512 > 0 iterations of 512 bytes.
TEXT ·readSumAVX512(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ n512+8(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
rs5loop:
	VPADDQ 0(SI), Z0, Z0
	VPADDQ 64(SI), Z1, Z1
	VPADDQ 128(SI), Z2, Z2
	VPADDQ 192(SI), Z3, Z3
	VPADDQ 256(SI), Z4, Z4
	VPADDQ 320(SI), Z5, Z5
	VPADDQ 384(SI), Z6, Z6
	VPADDQ 448(SI), Z7, Z7
	ADDQ $512, SI
	DECQ CX
	JNZ  rs5loop
	VPADDQ Z1, Z0, Z0
	VPADDQ Z3, Z2, Z2
	VPADDQ Z5, Z4, Z4
	VPADDQ Z7, Z6, Z6
	VPADDQ Z2, Z0, Z0
	VPADDQ Z6, Z4, Z4
	VPADDQ Z4, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDQ Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPADDQ X1, X0, X0
	VMOVQ X0, AX
	VZEROUPPER
	MOVQ AX, ret+16(FP)
	RET
