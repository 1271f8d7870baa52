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

// PREFETCH2_Q6K4(r): the same 840 bytes to L2 only (PREFETCHT2), for the
// K x8 kernel, which prefetches further ahead on its one stream.
#define PREFETCH2_Q6K4(r) \
	PREFETCHT2 0(r); \
	PREFETCHT2 64(r); \
	PREFETCHT2 128(r); \
	PREFETCHT2 192(r); \
	PREFETCHT2 256(r); \
	PREFETCHT2 320(r); \
	PREFETCHT2 384(r); \
	PREFETCHT2 448(r); \
	PREFETCHT2 512(r); \
	PREFETCHT2 576(r); \
	PREFETCHT2 640(r); \
	PREFETCHT2 704(r); \
	PREFETCHT2 768(r); \
	PREFETCHT2 832(r)

// HSUM4(a, b, c, d, xa, xt): the four rows' eight-lane int32 sums in
// a, b, c, d (Y registers) reduced to lane r of xa (a's X half) = row r's
// total, by the AVX2 kernels' VPHADDD order (c and xt clobbered too).
#define HSUM4(a, b, c, d, xa, xt) \
	VPHADDD b, a, a; \
	VPHADDD d, c, c; \
	VPHADDD c, a, a; \
	VEXTRACTI128 $1, a, xt; \
	VPADDD xt, xa, xa

// FOLD4Z: each of Z0..Z3's sixteen int32 lanes folded to eight in Y0..Y3
// (integer adds, exact; Y8 clobbered): the AVX-512 four-row kernels' step
// into HSUM4.
#define FOLD4Z \
	VEXTRACTI64X4 $1, Z0, Y8; \
	VPADDD Y8, Y0, Y0; \
	VEXTRACTI64X4 $1, Z1, Y8; \
	VPADDD Y8, Y1, Y1; \
	VEXTRACTI64X4 $1, Z2, Y8; \
	VPADDD Y8, Y2, Y2; \
	VEXTRACTI64X4 $1, Z3, Y8; \
	VPADDD Y8, Y3, Y3
