// Macros shared by the eight-row Q4_0 decode kernels (rows8_amd64.s: AVX2,
// rows_avx512_amd64.s: AVX-512), whose block sums of rows 0, 4, 1, 5 and
// 2, 6, 3, 7 end in Y3..Y6 (two rows a register, pairwise int32).

// Q40_R8_SUMS: Y3..Y6 folded to the eight rows' block sums, less the
// token's offset (tab[1] at 4(BX)), as floats in Y3 (Y4..Y7 clobbered).
// Q40_R8_ACC: Y3 times the rows' scales (Y8) times the token's (tab[0] at
// (BX)), added to Y0 (Y3, Y8, Y9 clobbered).
#define Q40_R8_SUMS \
	VPHADDD Y4, Y3, Y3; \
	VPHADDD Y6, Y5, Y5; \
	VPHADDD Y5, Y3, Y3; \
	VPBROADCASTD 4(BX), Y7; \
	VPSUBD Y7, Y3, Y3; \
	VCVTDQ2PS Y3, Y3

#define Q40_R8_ACC \
	VBROADCASTSS (BX), Y9; \
	VMULPS Y9, Y8, Y8; \
	VMULPS Y8, Y3, Y3; \
	VADDPS Y3, Y0, Y0

// X8_PF3 / X8_PF5: PREFETCHT0 of the three (Q4_0: 144-byte x8 blocks) or
// five (Q8_0: 272-byte blocks) cache lines R11 bytes ahead of SI, where
// R11 holds x8PrefetchQ4_0 / x8PrefetchQ8_0 (x8prefetch_amd64.go).
#define X8_PF3 \
	PREFETCHT0 (SI)(R11*1); \
	PREFETCHT0 64(SI)(R11*1); \
	PREFETCHT0 128(SI)(R11*1)

#define X8_PF5 \
	X8_PF3; \
	PREFETCHT0 192(SI)(R11*1); \
	PREFETCHT0 256(SI)(R11*1)
