//go:build !noasm

#include "textflag.h"

// AVX2 + F16C twins of the F16 attention kernels (f16.go). Products of a
// half and a half-valued float32 are exact in float32, so multiply-then-add
// equals an FMA, and each lane sees the generic body's additions in the
// generic body's order: the results are bit-identical.

// func axpyf16AVX2(acc *float32, a float32, v *uint16, n8 int)
// acc[i] += a·v[i] over n8×8 elements.
TEXT ·axpyf16AVX2(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), DI
	VBROADCASTSS a+8(FP), Y15
	MOVQ v+16(FP), SI
	MOVQ n8+24(FP), CX
axpyloop:
	VCVTPH2PS (SI), Y1
	VMULPS Y15, Y1, Y1
	VADDPS (DI), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  axpyloop
	VZEROUPPER
	RET

#define LANE8(koff, qoff, t, acc) \
	VCVTPH2PS koff(SI), t; \
	VMULPS qoff(DI), t, t; \
	VADDPS t, acc, acc

// func f16lanes64AVX2(q *float32, k *uint16, n64 int, out *[16]float32)
// 64 float32 lanes (Y0..Y7) of q·k over n64 chunks of 64, folded to 16:
// v[l] = (lane l + lane 32+l) + (lane 16+l + lane 48+l).
TEXT ·f16lanes64AVX2(SB), NOSPLIT, $0-32
	MOVQ q+0(FP), DI
	MOVQ k+8(FP), SI
	MOVQ n64+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
lanesloop:
	LANE8(0, 0, Y8, Y0)
	LANE8(16, 32, Y9, Y1)
	LANE8(32, 64, Y10, Y2)
	LANE8(48, 96, Y11, Y3)
	LANE8(64, 128, Y8, Y4)
	LANE8(80, 160, Y9, Y5)
	LANE8(96, 192, Y10, Y6)
	LANE8(112, 224, Y11, Y7)
	ADDQ $128, SI
	ADDQ $256, DI
	DECQ CX
	JNZ  lanesloop
	VADDPS Y4, Y0, Y0
	VADDPS Y6, Y2, Y2
	VADDPS Y2, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y7, Y3, Y3
	VADDPS Y3, Y1, Y1
	MOVQ out+24(FP), DX
	VMOVUPS Y0, 0(DX)
	VMOVUPS Y1, 32(DX)
	VZEROUPPER
	RET
