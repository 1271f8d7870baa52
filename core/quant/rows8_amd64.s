//go:build !noasm

#include "textflag.h"

// func q4_0q8_0r8tAVX2(w *byte, wstride int, x *byte, nb int, tab *byte, out *[8]float32)
// Eight Q4_0 rows against one token (decode), with the token's table
// (PrepareToken1): rows p and p+4 share a vector, their unsigned nibbles
// against the token's quants; three VPHADDDs leave the eight rows' block
// sums in the lanes of one register, 8·Σq comes off, and each lane does
// the one-token sequence sum += sumi·(d_w·d_x): bit-identical to it.
TEXT ·q4_0q8_0r8tAVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ tab+32(FP), BX
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R9)(R8*4), R11
	LEAQ (SI)(R8*8), DX
	MOVL $0x0F0F0F0F, AX; VMOVQ AX, X15; VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX; VMOVQ AX, X13; VPBROADCASTD X13, Y13
	VXORPS Y0, Y0, Y0
q40r8tloop:
	// The caller's next eight rows (the region after these) as one
	// sequential stream: 8·18 bytes of it per block.
	PREFETCHT0 0(DX)
	PREFETCHT0 64(DX)
	PREFETCHT0 128(DX)
	VBROADCASTI128 2(DI), Y11
	VBROADCASTI128 18(DI), Y12
	VMOVDQU 2(SI), X1
	VINSERTI128 $1, 2(SI)(R8*4), Y1, Y1
	VPSRLW $4, Y1, Y2
	VPAND Y15, Y1, Y1
	VPAND Y15, Y2, Y2
	VPMADDUBSW Y11, Y1, Y1
	VPMADDUBSW Y12, Y2, Y2
	VPADDW Y2, Y1, Y1
	VPMADDWD Y13, Y1, Y3
	VMOVDQU 2(SI)(R8*1), X1
	VINSERTI128 $1, 2(SI)(R10*1), Y1, Y1
	VPSRLW $4, Y1, Y2
	VPAND Y15, Y1, Y1
	VPAND Y15, Y2, Y2
	VPMADDUBSW Y11, Y1, Y1
	VPMADDUBSW Y12, Y2, Y2
	VPADDW Y2, Y1, Y1
	VPMADDWD Y13, Y1, Y4
	VMOVDQU 2(SI)(R8*2), X1
	VINSERTI128 $1, 2(SI)(R9*2), Y1, Y1
	VPSRLW $4, Y1, Y2
	VPAND Y15, Y1, Y1
	VPAND Y15, Y2, Y2
	VPMADDUBSW Y11, Y1, Y1
	VPMADDUBSW Y12, Y2, Y2
	VPADDW Y2, Y1, Y1
	VPMADDWD Y13, Y1, Y5
	VMOVDQU 2(SI)(R9*1), X1
	VINSERTI128 $1, 2(SI)(R11*1), Y1, Y1
	VPSRLW $4, Y1, Y2
	VPAND Y15, Y1, Y1
	VPAND Y15, Y2, Y2
	VPMADDUBSW Y11, Y1, Y1
	VPMADDUBSW Y12, Y2, Y2
	VPADDW Y2, Y1, Y1
	VPMADDWD Y13, Y1, Y6
	VPHADDD Y4, Y3, Y3
	VPHADDD Y6, Y5, Y5
	VPHADDD Y5, Y3, Y3
	VPBROADCASTD 4(BX), Y7
	VPSUBD Y7, Y3, Y3
	VCVTDQ2PS Y3, Y3
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
	VBROADCASTSS (BX), Y9
	VMULPS Y9, Y8, Y8
	VMULPS Y8, Y3, Y3
	VADDPS Y3, Y0, Y0
	ADDQ $18, SI
	ADDQ $144, DX
	ADDQ $34, DI
	ADDQ $8, BX
	DECQ CX
	JNZ  q40r8tloop
	MOVQ out+40(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET
