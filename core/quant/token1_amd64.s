//go:build !noasm

#include "textflag.h"

// func token1Q8_0AVX2(x, tab *byte, nb int)
// The token table of nb Q8_0 blocks at x (34 bytes each) into tab (8 bytes
// a block, token1Q8_0): the block's F16 scale widened to float32 (F16C,
// exact, NaNs quieted as F16ToF32 does), then 8·Σq as an int32. Σq is
// VPSADBW's sum of the quants with their sign bit flipped (q+128, unsigned)
// less 32·128. nb > 0.
TEXT ·token1Q8_0AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ tab+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVL $0x80808080, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	VPXOR Y14, Y14, Y14
t1loop:
	VMOVDQU 2(SI), Y0
	VPXOR Y15, Y0, Y0
	VPSADBW Y14, Y0, Y0 // four sums of eight q+128
	VEXTRACTI128 $1, Y0, X1
	VPADDQ X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPADDQ X1, X0, X0
	VMOVD X0, BX
	SUBL $4096, BX
	SHLL $3, BX
	MOVL BX, 4(DI)
	MOVWLZX 0(SI), AX
	VMOVD AX, X2
	VCVTPH2PS X2, X2
	VMOVSS X2, 0(DI)
	ADDQ $34, SI
	ADDQ $8, DI
	DECQ CX
	JNZ  t1loop
	VZEROUPPER
	RET
