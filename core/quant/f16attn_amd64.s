//go:build !noasm

#include "textflag.h"

// AVX2 + F16C twins of the attention helpers in f16attn.go. Each lane or
// element sees the generic body's operations in its order (products of a
// half and a half-valued float32 are exact), so the results are
// bit-identical.

// func f16dot64AVX2(q *float32, k *uint16, n64 int) float32
// 64 float32 lanes (Y0..Y7) of q·k over n64 chunks of 64, folded to 16
// (l + 32+l) + (16+l + 48+l), then ReduceAdd16.
TEXT ·f16dot64AVX2(SB), NOSPLIT, $0-28
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
dot64loop:
	VCVTPH2PS 0(SI), Y8
	VFMADD231PS 0(DI), Y8, Y0
	VCVTPH2PS 16(SI), Y9
	VFMADD231PS 32(DI), Y9, Y1
	VCVTPH2PS 32(SI), Y10
	VFMADD231PS 64(DI), Y10, Y2
	VCVTPH2PS 48(SI), Y11
	VFMADD231PS 96(DI), Y11, Y3
	VCVTPH2PS 64(SI), Y8
	VFMADD231PS 128(DI), Y8, Y4
	VCVTPH2PS 80(SI), Y9
	VFMADD231PS 160(DI), Y9, Y5
	VCVTPH2PS 96(SI), Y10
	VFMADD231PS 192(DI), Y10, Y6
	VCVTPH2PS 112(SI), Y11
	VFMADD231PS 224(DI), Y11, Y7
	ADDQ $128, SI
	ADDQ $256, DI
	DECQ CX
	JNZ  dot64loop
	VADDPS Y4, Y0, Y0
	VADDPS Y6, Y2, Y2
	VADDPS Y2, Y0, Y0 // v[0..7]
	VADDPS Y5, Y1, Y1
	VADDPS Y7, Y3, Y3
	VADDPS Y3, Y1, Y1 // v[8..15]
	VADDPS Y0, Y1, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X0, X1, X0
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func axpyf16f64AVX2(acc *float64, a float32, v *uint16, n8 int)
// acc[i] += float64(a·v[i]) over n8×8 elements.
TEXT ·axpyf16f64AVX2(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), DI
	VBROADCASTSS a+8(FP), Y15
	MOVQ v+16(FP), SI
	MOVQ n8+24(FP), CX
axpy64loop:
	VCVTPH2PS (SI), Y1
	VMULPS Y15, Y1, Y1
	VCVTPS2PD X1, Y2
	VEXTRACTF128 $1, Y1, X3
	VCVTPS2PD X3, Y3
	VADDPD (DI), Y2, Y2
	VADDPD 32(DI), Y3, Y3
	VMOVUPD Y2, (DI)
	VMOVUPD Y3, 32(DI)
	ADDQ $16, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  axpy64loop
	VZEROUPPER
	RET

// FOLDV(t, a, b, c, d): t = (a + b) + (c + d), the four lane rows at a..d.
#define FOLDV(t, a, b, c, d) \
	VMOVUPS a, t; \
	VADDPS b, t, t; \
	VMOVUPS c, Y1; \
	VADDPS d, Y1, Y1; \
	VADDPS Y1, t, t

// FOLDPAIR: rows at P0 = lanes + l·stride and P32 = P0 + 32·stride:
// t = v[8+l] + v[l] (ReduceAdd16's first step) with
// v[x] = (row x + row 32+x) + (row 16+x + row 48+x); P0, P32 advance a row.
#define FOLDPAIR(t) \
	FOLDV(Y0, (R11), (R12), (R11)(R9*2), (R12)(R9*2)); \
	FOLDV(Y2, (R11)(R9*1), (R12)(R9*1), (R11)(R10*1), (R12)(R10*1)); \
	VADDPS Y0, Y2, t; \
	ADDQ R8, R11; \
	ADDQ R8, R12

// func foldlanes64AVX2(out, lanes *float32, tail *float64, d, n8 int)
// For n8 groups of 8 products j (the rows of lanes are d floats apart):
// the 16 folded lanes reduced as ReduceAdd16, then out[j] = float32(r +
// tail[j]) in float64.
TEXT ·foldlanes64AVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ lanes+8(FP), BX
	MOVQ tail+16(FP), DX
	MOVQ d+24(FP), R8
	MOVQ n8+32(FP), CX
	SHLQ $2, R8            // row stride in bytes
	MOVQ R8, R9
	SHLQ $3, R9            // 8 rows
	LEAQ (R9)(R9*2), R10   // 24 rows
foldloop:
	MOVQ BX, R11
	LEAQ (R11)(R9*4), R12  // row 32
	FOLDPAIR(Y8)
	FOLDPAIR(Y9)
	FOLDPAIR(Y10)
	FOLDPAIR(Y11)
	FOLDPAIR(Y12)
	FOLDPAIR(Y13)
	FOLDPAIR(Y14)
	FOLDPAIR(Y15)
	VADDPS Y8, Y12, Y8     // t6[0] = t3[4] + t3[0]
	VADDPS Y9, Y13, Y9
	VADDPS Y10, Y14, Y10
	VADDPS Y11, Y15, Y11
	VADDPS Y10, Y8, Y8     // t6[0] + t6[2]
	VADDPS Y11, Y9, Y9     // t6[1] + t6[3]
	VADDPS Y9, Y8, Y8
	VCVTPS2PD X8, Y0
	VEXTRACTF128 $1, Y8, X1
	VCVTPS2PD X1, Y1
	VADDPD (DX), Y0, Y0
	VADDPD 32(DX), Y1, Y1
	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VMOVUPS X0, (DI)
	VMOVUPS X1, 16(DI)
	ADDQ $32, BX
	ADDQ $64, DX
	ADDQ $32, DI
	DECQ CX
	JNZ  foldloop
	VZEROUPPER
	RET

// func roundf16AVX2(dst, src *float32, s float32, scaled bool, n8 int)
// dst = F16ToF32(F32ToF16(src·s or src)) over n8×8 elements: VCVTPS2PH
// rounds to nearest even and keeps NaN payloads as F32ToF16 does.
TEXT ·roundf16AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	VBROADCASTSS s+16(FP), Y15
	MOVBLZX scaled+20(FP), AX
	MOVQ n8+24(FP), CX
	TESTL AX, AX
	JZ   roundplain
roundscaled:
	VMULPS (SI), Y15, Y0
	VCVTPS2PH $0, Y0, X0
	VCVTPH2PS X0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  roundscaled
	VZEROUPPER
	RET
roundplain:
	VMOVUPS (SI), Y0
	VCVTPS2PH $0, Y0, X0
	VCVTPH2PS X0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  roundplain
	VZEROUPPER
	RET

// func cvtf16AVX2(dst *byte, src *float32, n8 int)
TEXT ·cvtf16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n8+16(FP), CX
cvtloop:
	VMOVUPS (SI), Y0
	VCVTPS2PH $0, Y0, X0
	VMOVUPS X0, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	DECQ CX
	JNZ  cvtloop
	VZEROUPPER
	RET

// REDUCE64: Y0..Y7 hold lanes 0..63 of one dot product; fold them to 16
// (l + 32+l) + (16+l + 48+l) and ReduceAdd16 into X0, as f16dot64AVX2
// does (same instructions, same operand order). Y1 is clobbered.
#define REDUCE64 \
	VADDPS Y4, Y0, Y0; \
	VADDPS Y6, Y2, Y2; \
	VADDPS Y2, Y0, Y0; \
	VADDPS Y5, Y1, Y1; \
	VADDPS Y7, Y3, Y3; \
	VADDPS Y3, Y1, Y1; \
	VADDPS Y0, Y1, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X0, X1, X0; \
	VMOVHLPS X0, X0, X1; \
	VADDPS X1, X0, X0; \
	VMOVSHDUP X0, X1; \
	VADDSS X1, X0, X0

#define ZERO8 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

// func f16dot64gAVX2(out *float32, ostride int, q *float32, qstride int, k *uint16, n64, ng int)
// out[h·ostride] = f16dot64AVX2(q + h·qstride, k, n64) for h < ng: one K
// row (of n64 chunks of 64, converted again for each head, from L1)
// against ng q rows.
TEXT ·f16dot64gAVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DX
	MOVQ ostride+8(FP), R12
	SHLQ $2, R12
	MOVQ q+16(FP), R10
	MOVQ qstride+24(FP), R8
	SHLQ $2, R8
	MOVQ k+32(FP), SI
	MOVQ n64+40(FP), R9
	MOVQ ng+48(FP), BX
dotghead:
	MOVQ R10, DI
	MOVQ SI, R11
	MOVQ R9, CX
	ZERO8
dotgloop:
	VCVTPH2PS 0(R11), Y8
	VFMADD231PS 0(DI), Y8, Y0
	VCVTPH2PS 16(R11), Y9
	VFMADD231PS 32(DI), Y9, Y1
	VCVTPH2PS 32(R11), Y10
	VFMADD231PS 64(DI), Y10, Y2
	VCVTPH2PS 48(R11), Y11
	VFMADD231PS 96(DI), Y11, Y3
	VCVTPH2PS 64(R11), Y8
	VFMADD231PS 128(DI), Y8, Y4
	VCVTPH2PS 80(R11), Y9
	VFMADD231PS 160(DI), Y9, Y5
	VCVTPH2PS 96(R11), Y10
	VFMADD231PS 192(DI), Y10, Y6
	VCVTPH2PS 112(R11), Y11
	VFMADD231PS 224(DI), Y11, Y7
	ADDQ $128, R11
	ADDQ $256, DI
	DECQ CX
	JNZ  dotgloop
	REDUCE64
	MOVSS X0, (DX)
	ADDQ R12, DX
	ADDQ R8, R10
	DECQ BX
	JNZ  dotghead
	VZEROUPPER
	RET

// LROW(off, t, acc): acc = cvt(v row + off)·w + acc, the product first
// (as axpyf16AVX2: VMULPS cvt·w, then VADDPS product + acc).
#define LROW(off, t, acc) \
	VCVTPH2PS off(R12)(CX*2), t; \
	VMULPS Y15, t, t; \
	VADDPS acc, t, acc

// func f16lanes64axpyAVX2(lanes *float32, d int, w *float32, v *uint16, vstride, nrows, n8 int)
// For each lane l < 64 and each group of 8 columns c < 8·n8:
// lanes[l·d + c..c+7] = Σ w[j]·v[j·vstride + c..c+7] over the rows j ≡ l
// (mod 64), j < nrows, in j order from +0, skipping the weights whose bits
// are 0x80000000 (−0). The sums stay in registers (eight YMM for 64
// columns at a time, one for the rest) and are stored once.
TEXT ·f16lanes64axpyAVX2(SB), NOSPLIT, $0-56
	MOVQ lanes+0(FP), DI
	MOVQ d+8(FP), R8
	SHLQ $2, R8            // lane row stride in bytes
	MOVQ w+16(FP), DX
	MOVQ v+24(FP), SI
	MOVQ vstride+32(FP), R9
	SHLQ $1, R9            // V row stride in bytes
	MOVQ nrows+40(FP), R10
	MOVQ n8+48(FP), R11
	SHLQ $3, R11           // columns done here
	MOVQ R9, R13
	SHLQ $6, R13           // 64 rows: the next row of the same lane
	XORQ BX, BX            // l
lanesl:
	XORQ CX, CX            // column
lanes64:
	LEAQ 64(CX), AX
	CMPQ AX, R11
	JGT  lanes8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ BX, AX            // j
	MOVQ SI, R12           // row j of v
lanes64row:
	CMPQ AX, R10
	JGE  lanes64store
	CMPL (DX)(AX*4), $-2147483648
	JEQ  lanes64skip
	VBROADCASTSS (DX)(AX*4), Y15
	LROW(0, Y8, Y0)
	LROW(16, Y9, Y1)
	LROW(32, Y10, Y2)
	LROW(48, Y11, Y3)
	LROW(64, Y12, Y4)
	LROW(80, Y13, Y5)
	LROW(96, Y14, Y6)
	LROW(112, Y8, Y7)
lanes64skip:
	ADDQ $64, AX
	ADDQ R13, R12
	JMP  lanes64row
lanes64store:
	VMOVUPS Y0, 0(DI)(CX*4)
	VMOVUPS Y1, 32(DI)(CX*4)
	VMOVUPS Y2, 64(DI)(CX*4)
	VMOVUPS Y3, 96(DI)(CX*4)
	VMOVUPS Y4, 128(DI)(CX*4)
	VMOVUPS Y5, 160(DI)(CX*4)
	VMOVUPS Y6, 192(DI)(CX*4)
	VMOVUPS Y7, 224(DI)(CX*4)
	ADDQ $64, CX
	JMP  lanes64
lanes8:
	CMPQ CX, R11
	JGE  lanesnext
	VXORPS Y0, Y0, Y0
	MOVQ BX, AX
	MOVQ SI, R12
lanes8row:
	CMPQ AX, R10
	JGE  lanes8store
	CMPL (DX)(AX*4), $-2147483648
	JEQ  lanes8skip
	VBROADCASTSS (DX)(AX*4), Y15
	LROW(0, Y8, Y0)
lanes8skip:
	ADDQ $64, AX
	ADDQ R13, R12
	JMP  lanes8row
lanes8store:
	VMOVUPS Y0, 0(DI)(CX*4)
	ADDQ $8, CX
	JMP  lanes8
lanesnext:
	ADDQ R8, DI
	ADDQ R9, SI
	INCQ BX
	CMPQ BX, $64
	JLT  lanesl
	VZEROUPPER
	RET

// func f16dot64r1AVX2(out *float32, ostride int, q *float32, ng int, k *uint16, kstride, nrows int)
// Head dimension 64: for each of nrows K rows (kstride halves apart),
// converted once into Y8..Y15, and each of ng q rows (64 floats apart):
// out[h·ostride + j] = f16dot64AVX2(q + 64h, k row j, 1).
TEXT ·f16dot64r1AVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DX
	MOVQ ostride+8(FP), R10
	SHLQ $2, R10
	MOVQ q+16(FP), DI
	MOVQ k+32(FP), SI
	MOVQ kstride+40(FP), R11
	SHLQ $1, R11
	MOVQ nrows+48(FP), R12
dotr1row:
	VCVTPH2PS 0(SI), Y8
	VCVTPH2PS 16(SI), Y9
	VCVTPH2PS 32(SI), Y10
	VCVTPH2PS 48(SI), Y11
	VCVTPH2PS 64(SI), Y12
	VCVTPH2PS 80(SI), Y13
	VCVTPH2PS 96(SI), Y14
	VCVTPH2PS 112(SI), Y15
	MOVQ DI, AX
	MOVQ DX, CX
	MOVQ ng+24(FP), BX
dotr1head:
	ZERO8
	VFMADD231PS 0(AX), Y8, Y0
	VFMADD231PS 32(AX), Y9, Y1
	VFMADD231PS 64(AX), Y10, Y2
	VFMADD231PS 96(AX), Y11, Y3
	VFMADD231PS 128(AX), Y12, Y4
	VFMADD231PS 160(AX), Y13, Y5
	VFMADD231PS 192(AX), Y14, Y6
	VFMADD231PS 224(AX), Y15, Y7
	REDUCE64
	MOVSS X0, (CX)
	ADDQ R10, CX
	ADDQ $256, AX
	DECQ BX
	JNZ  dotr1head
	ADDQ $4, DX
	ADDQ R11, SI
	DECQ R12
	JNZ  dotr1row
	VZEROUPPER
	RET

// F64ROW(off, t, tx, u, lo, hi): lo/hi += float64(cvt(v row + off)·w), the
// eight products widened in two halves (as axpyf16f64AVX2).
#define F64ROW(off, t, tx, u, lo, hi) \
	VCVTPH2PS off(R12), t; \
	VMULPS Y15, t, t; \
	VEXTRACTF128 $1, t, X3; \
	VCVTPS2PD X3, u; \
	VCVTPS2PD tx, t; \
	VADDPD lo, t, lo; \
	VADDPD hi, u, hi

// func f16f64rowsAVX2(acc *float64, w *float32, v *uint16, vstride, nrows, n8 int)
// For each group of 8 columns c < 8·n8 and each row j < nrows whose weight
// is not −0 (bits 0x80000000), in j order: acc[c..c+7] += float64(w[j]·
// v[j·vstride + c..c+7]), as axpyf16f64AVX2 rounds it. The sums stay in
// registers over the rows, 32 columns at a time (four independent pairs),
// then 8.
TEXT ·f16f64rowsAVX2(SB), NOSPLIT, $0-48
	MOVQ acc+0(FP), DI
	MOVQ w+8(FP), DX
	MOVQ v+16(FP), SI
	MOVQ vstride+24(FP), R9
	SHLQ $1, R9
	MOVQ nrows+32(FP), R10
	MOVQ n8+40(FP), CX
f64col32:
	CMPQ CX, $4
	JLT  f64col
	VMOVUPD 0(DI), Y4
	VMOVUPD 32(DI), Y5
	VMOVUPD 64(DI), Y6
	VMOVUPD 96(DI), Y7
	VMOVUPD 128(DI), Y8
	VMOVUPD 160(DI), Y9
	VMOVUPD 192(DI), Y10
	VMOVUPD 224(DI), Y11
	XORQ AX, AX
	MOVQ SI, R12
f64row32:
	CMPL (DX)(AX*4), $-2147483648
	JEQ  f64skip32
	VBROADCASTSS (DX)(AX*4), Y15
	F64ROW(0, Y0, X0, Y1, Y4, Y5)
	F64ROW(16, Y2, X2, Y1, Y6, Y7)
	F64ROW(32, Y12, X12, Y13, Y8, Y9)
	F64ROW(48, Y14, X14, Y13, Y10, Y11)
f64skip32:
	ADDQ R9, R12
	INCQ AX
	CMPQ AX, R10
	JLT  f64row32
	VMOVUPD Y4, 0(DI)
	VMOVUPD Y5, 32(DI)
	VMOVUPD Y6, 64(DI)
	VMOVUPD Y7, 96(DI)
	VMOVUPD Y8, 128(DI)
	VMOVUPD Y9, 160(DI)
	VMOVUPD Y10, 192(DI)
	VMOVUPD Y11, 224(DI)
	ADDQ $256, DI
	ADDQ $64, SI
	SUBQ $4, CX
	JMP  f64col32
f64col:
	TESTQ CX, CX
	JZ   f64done
	VMOVUPD (DI), Y4
	VMOVUPD 32(DI), Y5
	XORQ AX, AX
	MOVQ SI, R12
f64row:
	CMPL (DX)(AX*4), $-2147483648
	JEQ  f64skip
	VBROADCASTSS (DX)(AX*4), Y15
	F64ROW(0, Y0, X0, Y1, Y4, Y5)
f64skip:
	ADDQ R9, R12
	INCQ AX
	CMPQ AX, R10
	JLT  f64row
	VMOVUPD Y4, (DI)
	VMOVUPD Y5, 32(DI)
	ADDQ $64, DI
	ADDQ $16, SI
	DECQ CX
	JMP  f64col
f64done:
	VZEROUPPER
	RET
