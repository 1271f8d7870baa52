//go:build !noasm

#include "textflag.h"

// AVX2 + FMA twins of the rope kernels (rope.go): each lane computes
// fma(x0, cos, −(x1·sin)) or fma(x0, sin, x1·cos) with the product inside
// rounded first, as the generic body does, so results are bit-identical.
// Every iteration loads its inputs before it stores, so out may be x.

DATA ropeSignEven<>+0(SB)/8, $0x0000000080000000
DATA ropeSignEven<>+8(SB)/8, $0x0000000080000000
DATA ropeSignEven<>+16(SB)/8, $0x0000000080000000
DATA ropeSignEven<>+24(SB)/8, $0x0000000080000000
GLOBL ropeSignEven<>(SB), RODATA|NOPTR, $32

// func ropePairsAVX2(out, x, cs *float32, n8 int)
// n8 steps of 8 floats (four pairs): with X0 = the pairs' x0 duplicated,
// X1 = their x1 duplicated and SC = cs with each pair swapped,
// out = fma(X0, cs, ±(X1·SC)), the sign flipped in the even lanes.
TEXT ·ropePairsAVX2(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ cs+16(FP), DX
	MOVQ n8+24(FP), CX
	VMOVUPS ropeSignEven<>(SB), Y15
pairsloop:
	VMOVUPS (SI), Y0
	VMOVUPS (DX), Y1
	VMOVSLDUP Y0, Y2
	VMOVSHDUP Y0, Y3
	VPERMILPS $0xB1, Y1, Y4
	VMULPS Y4, Y3, Y3
	VXORPS Y15, Y3, Y3
	VFMADD231PS Y1, Y2, Y3
	VMOVUPS Y3, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ  pairsloop
	VZEROUPPER
	RET

// func ropeHalvesAVX2(out, x, cs *float32, h, n8 int)
// n8 steps of 8 pairs (x[i], x[i+h]); cos and sin de-interleaved from 16
// floats of cs (even and odd elements, then the 64-bit lanes reordered).
TEXT ·ropeHalvesAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ cs+16(FP), DX
	MOVQ h+24(FP), R8
	MOVQ n8+32(FP), CX
	SHLQ $2, R8
	VMOVUPS ropeSignEven<>(SB), Y15
	VPSLLQ $32, Y15, Y14
	VORPS Y15, Y14, Y15 // sign bit in every lane
halvesloop:
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VSHUFPS $0x88, Y1, Y0, Y2
	VSHUFPS $0xDD, Y1, Y0, Y3
	VPERMPD $0xD8, Y2, Y2 // cos
	VPERMPD $0xD8, Y3, Y3 // sin
	VMOVUPS (SI), Y4      // x0
	VMOVUPS (SI)(R8*1), Y5 // x1
	VMULPS Y3, Y5, Y6
	VXORPS Y15, Y6, Y6 // −(x1·sin)
	VFMADD231PS Y2, Y4, Y6
	VMULPS Y2, Y5, Y7 // x1·cos
	VFMADD231PS Y3, Y4, Y7
	VMOVUPS Y6, (DI)
	VMOVUPS Y7, (DI)(R8*1)
	ADDQ $64, DX
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  halvesloop
	VZEROUPPER
	RET
