//go:build !noasm

#include "textflag.h"

// Eight-token tile packing (tile8.go, tile8q8.go), AVX2: per block the
// eight tokens' F16 scales gathered and widened (VCVTPH2PS, the same bits
// as F16ToF32), their 32 quants loaded as eight registers of eight dwords
// and transposed (dword, qword, lane unpacks) into the eight chunks of four
// quants, and 8·Σq per token from the chunks (VPMADDUBSW against 0x01
// bytes: int16 sums of at most 2048, VPMADDWD, shift): byte for byte the
// Go packers' tiles.

// PACK8_ARGS: x in SI, its row bytes in R8 (and 3, 5, 7 times them in R9,
// R10, R11), the block count in CX, the tile in DI.
#define PACK8_ARGS \
	MOVQ x+0(FP), SI; \
	MOVQ xrb+8(FP), R8; \
	MOVQ nb+16(FP), CX; \
	MOVQ tile+24(FP), DI; \
	LEAQ (R8)(R8*2), R9; \
	LEAQ (R8)(R8*4), R10; \
	LEAQ (R9)(R8*4), R11

// PACK8_TRANSPOSE: the block's eight F16 scales widened to 0(DI), and its
// eight tokens' 32 quants transposed into the eight chunks Y8..Y15.
#define PACK8_TRANSPOSE \
	MOVWLZX (SI), AX; \
	VMOVD AX, X0; \
	VPINSRW $1, (SI)(R8*1), X0, X0; \
	VPINSRW $2, (SI)(R8*2), X0, X0; \
	VPINSRW $3, (SI)(R9*1), X0, X0; \
	VPINSRW $4, (SI)(R8*4), X0, X0; \
	VPINSRW $5, (SI)(R10*1), X0, X0; \
	VPINSRW $6, (SI)(R9*2), X0, X0; \
	VPINSRW $7, (SI)(R11*1), X0, X0; \
	VCVTPH2PS X0, Y0; \
	VMOVUPS Y0, (DI); \
	VMOVDQU 2(SI), Y0; \
	VMOVDQU 2(SI)(R8*1), Y1; \
	VMOVDQU 2(SI)(R8*2), Y2; \
	VMOVDQU 2(SI)(R9*1), Y3; \
	VMOVDQU 2(SI)(R8*4), Y4; \
	VMOVDQU 2(SI)(R10*1), Y5; \
	VMOVDQU 2(SI)(R9*2), Y6; \
	VMOVDQU 2(SI)(R11*1), Y7; \
	VPUNPCKLDQ Y1, Y0, Y8; \
	VPUNPCKHDQ Y1, Y0, Y9; \
	VPUNPCKLDQ Y3, Y2, Y10; \
	VPUNPCKHDQ Y3, Y2, Y11; \
	VPUNPCKLDQ Y5, Y4, Y12; \
	VPUNPCKHDQ Y5, Y4, Y13; \
	VPUNPCKLDQ Y7, Y6, Y14; \
	VPUNPCKHDQ Y7, Y6, Y15; \
	VPUNPCKLQDQ Y10, Y8, Y0; \
	VPUNPCKHQDQ Y10, Y8, Y1; \
	VPUNPCKLQDQ Y11, Y9, Y2; \
	VPUNPCKHQDQ Y11, Y9, Y3; \
	VPUNPCKLQDQ Y14, Y12, Y4; \
	VPUNPCKHQDQ Y14, Y12, Y5; \
	VPUNPCKLQDQ Y15, Y13, Y6; \
	VPUNPCKHQDQ Y15, Y13, Y7; \
	VPERM2I128 $0x20, Y4, Y0, Y8; \
	VPERM2I128 $0x31, Y4, Y0, Y12; \
	VPERM2I128 $0x20, Y5, Y1, Y9; \
	VPERM2I128 $0x31, Y5, Y1, Y13; \
	VPERM2I128 $0x20, Y6, Y2, Y10; \
	VPERM2I128 $0x31, Y6, Y2, Y14; \
	VPERM2I128 $0x20, Y7, Y3, Y11; \
	VPERM2I128 $0x31, Y7, Y3, Y15

// PACK8_SUMS: 8·Σq of each token from the chunks Y8..Y15, to 32(DI).
#define PACK8_SUMS \
	MOVL $0x01010101, AX; VMOVD AX, X0; VPBROADCASTD X0, Y0; \
	MOVL $0x00010001, AX; VMOVD AX, X1; VPBROADCASTD X1, Y1; \
	VPMADDUBSW Y8, Y0, Y2; \
	VPMADDUBSW Y9, Y0, Y3; \
	VPADDW Y3, Y2, Y2; \
	VPMADDUBSW Y10, Y0, Y3; \
	VPADDW Y3, Y2, Y2; \
	VPMADDUBSW Y11, Y0, Y3; \
	VPADDW Y3, Y2, Y2; \
	VPMADDUBSW Y12, Y0, Y3; \
	VPADDW Y3, Y2, Y2; \
	VPMADDUBSW Y13, Y0, Y3; \
	VPADDW Y3, Y2, Y2; \
	VPMADDUBSW Y14, Y0, Y3; \
	VPADDW Y3, Y2, Y2; \
	VPMADDUBSW Y15, Y0, Y3; \
	VPADDW Y3, Y2, Y2; \
	VPMADDWD Y1, Y2, Y2; \
	VPSLLD $3, Y2, Y2; \
	VMOVDQU Y2, 32(DI)

// func packTile8Q8_0AVX2(x *byte, xrb, nb int, tile *byte)
// tile8Block's tiles (320 bytes a block).
TEXT ·packTile8Q8_0AVX2(SB), NOSPLIT, $0-32
	PACK8_ARGS
packTile8Q8_0AVX2loop:
	PACK8_TRANSPOSE
	VMOVDQU Y8, 64(DI)
	VMOVDQU Y9, 96(DI)
	VMOVDQU Y10, 128(DI)
	VMOVDQU Y11, 160(DI)
	VMOVDQU Y12, 192(DI)
	VMOVDQU Y13, 224(DI)
	VMOVDQU Y14, 256(DI)
	VMOVDQU Y15, 288(DI)
	PACK8_SUMS
	ADDQ $34, SI
	ADDQ $320, DI
	DECQ CX
	JNZ  packTile8Q8_0AVX2loop
	VZEROUPPER
	RET

// func packTile8Q8_0AbsAVX2(x *byte, xrb, nb int, tile *byte)
// tile8Abs tiles (576 bytes a block): each chunk, then its magnitudes
// (VPABSB: −128 gives 0x80, as abs4).
TEXT ·packTile8Q8_0AbsAVX2(SB), NOSPLIT, $0-32
	PACK8_ARGS
packTile8Q8_0AbsAVX2loop:
	PACK8_TRANSPOSE
	VMOVDQU Y8, 64(DI)
	VPABSB Y8, Y0
	VMOVDQU Y0, 96(DI)
	VMOVDQU Y9, 128(DI)
	VPABSB Y9, Y1
	VMOVDQU Y1, 160(DI)
	VMOVDQU Y10, 192(DI)
	VPABSB Y10, Y2
	VMOVDQU Y2, 224(DI)
	VMOVDQU Y11, 256(DI)
	VPABSB Y11, Y3
	VMOVDQU Y3, 288(DI)
	VMOVDQU Y12, 320(DI)
	VPABSB Y12, Y4
	VMOVDQU Y4, 352(DI)
	VMOVDQU Y13, 384(DI)
	VPABSB Y13, Y5
	VMOVDQU Y5, 416(DI)
	VMOVDQU Y14, 448(DI)
	VPABSB Y14, Y6
	VMOVDQU Y6, 480(DI)
	VMOVDQU Y15, 512(DI)
	VPABSB Y15, Y7
	VMOVDQU Y7, 544(DI)
	PACK8_SUMS
	ADDQ $34, SI
	ADDQ $576, DI
	DECQ CX
	JNZ  packTile8Q8_0AbsAVX2loop
	VZEROUPPER
	RET
