//go:build !noasm

#include "textflag.h"

// BC(imm, y): every lane of y is the float32 with bits imm.
#define BC(imm, y) \
	MOVL imm, AX; VMOVD AX, X15; VPBROADCASTD X15, y

// func expf16x8AVX2(dst, src *float32) bool
// Eight lanes of expf16 (ggml512.go), each step the same single-rounded
// FMA or operation, so the results are bit-identical. Lanes with n < −192
// (−Inf among them: the masked softmax entries) are 0, as in expf16.
// Returns false, with dst untouched, when some other lane has |n| > 126 or
// is NaN (the caller then runs the Go body for the block: those need its
// range handling).
TEXT ·expf16x8AVX2(SB), NOSPLIT, $0-17
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	VMOVUPS (SI), Y0          // x
	BC($0x4b400000, Y1)       // shift
	BC($0x3fb8aa3b, Y2)       // log2e
	VMOVAPS Y1, Y3
	VFMADD231PS Y2, Y0, Y3    // z = fma(x, log2e, shift)
	VSUBPS Y1, Y3, Y3         // n = z − shift
	BC($0x7fffffff, Y4)
	VANDPS Y4, Y3, Y4         // |n|
	BC($0x42fc0000, Y5)       // 126
	VCMPPS $2, Y5, Y4, Y4     // |n| <= 126 (false for NaN)
	BC($0xc3400000, Y5)       // −192
	VCMPPS $1, Y5, Y3, Y13    // n < −192: the result is 0 (false for NaN)
	VORPS Y13, Y4, Y4
	VMOVMSKPS Y4, AX
	CMPL AX, $0xff
	JNE  out
	BC($0x80000000, Y5)
	VXORPS Y5, Y3, Y5         // −n
	VMOVAPS Y0, Y6
	BC($0x3f317200, Y7)       // ln2hi
	VFMADD231PS Y7, Y5, Y6    // fma(−n, ln2hi, x)
	BC($0x35bfbe8e, Y7)       // ln2lo
	VFMADD231PS Y7, Y5, Y6    // b = fma(−n, ln2lo, ·)
	VMULPS Y6, Y6, Y7         // u = b·b
	BC($0x3d2b9f17, Y8)       // c1
	BC($0x3c072010, Y9)       // c0
	VFMADD231PS Y9, Y6, Y8    // p1 = fma(c0, b, c1)
	BC($0x3efffedb, Y9)       // c3
	BC($0x3e2aaf33, Y10)      // c2
	VFMADD231PS Y10, Y6, Y9   // p2 = fma(c2, b, c3)
	VFMADD231PS Y7, Y8, Y9    // p3 = fma(p1, u, p2)
	BC($0x3f800000, Y10)      // 1
	BC($0x3f7ffff6, Y11)      // c4
	VFMADD231PS Y11, Y6, Y10  // p4 = fma(c4, b, 1)
	VFMADD231PS Y7, Y9, Y10   // j = fma(p3, u, p4)
	VCVTPS2DQ Y3, Y11         // n (integral)
	BC($127, Y12)
	VPADDD Y12, Y11, Y11
	VPSLLD $23, Y11, Y11      // 2^n, a normal float32 for |n| <= 126
	VMULPS Y11, Y10, Y10      // j·2^n, rounded once
	VANDNPS Y10, Y13, Y10     // 0 where n < −192
	VMOVUPS Y10, (DI)
	MOVB $1, ret+16(FP)
	VZEROUPPER
	RET
out:
	MOVB $0, ret+16(FP)
	VZEROUPPER
	RET
