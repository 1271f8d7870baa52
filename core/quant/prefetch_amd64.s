//go:build !noasm

#include "textflag.h"

// func prefetchLines(p *byte, n int)
// PREFETCHT0 of every 64-byte line that p..p+n-1 touches (n > 0).
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ -1(SI)(CX*1), DX // the last byte
	ANDQ $-64, SI
prefetchloop:
	PREFETCHT0 (SI)
	ADDQ $64, SI
	CMPQ SI, DX
	JLE  prefetchloop
	RET

// func cpuVendor() (ebx, edx, ecx uint32)
TEXT ·cpuVendor(SB), NOSPLIT, $0-12
	XORL AX, AX
	XORL CX, CX
	CPUID
	MOVL BX, ebx+0(FP)
	MOVL DX, edx+4(FP)
	MOVL CX, ecx+8(FP)
	RET
