// Macros shared by the four-row decode kernels (rows4k_amd64.s,
// rows4q6k_amd64.s, rows4q6k_avx512_amd64.s, rows_avx512_amd64.s): row r of
// the four starts at SI + r·R8, with R9 = 3·R8.

// F16X4(off, x): the F16 value at byte off of each of the four rows, as four
// float32 in x, lane r from row r (AX is clobbered).
#define F16X4(off, x) \
	MOVWLZX off(SI), AX; \
	VMOVD AX, x; \
	VPINSRW $1, off(SI)(R8*1), x, x; \
	VPINSRW $2, off(SI)(R8*2), x, x; \
	VPINSRW $3, off(SI)(R9*1), x, x; \
	VCVTPH2PS x, x

// PREFETCH_Q6K4(r): the 840 bytes at r — the next call's four Q6_K rows'
// super-blocks of this step (4·210), taken as one sequential stream.
#define PREFETCH_Q6K4(r) \
	PREFETCHT0 0(r); \
	PREFETCHT0 64(r); \
	PREFETCHT0 128(r); \
	PREFETCHT0 192(r); \
	PREFETCHT0 256(r); \
	PREFETCHT0 320(r); \
	PREFETCHT0 384(r); \
	PREFETCHT0 448(r); \
	PREFETCHT0 512(r); \
	PREFETCHT0 576(r); \
	PREFETCHT0 640(r); \
	PREFETCHT0 704(r); \
	PREFETCHT0 768(r); \
	PREFETCHT0 832(r)
