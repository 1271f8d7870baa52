// Tensor-core mat-mul for batches of tokens (prefill): "mmq". Activations
// are quantized once per mat-mul with the CPU's numerics (q8_0, q8_1 or
// q8_K, as quant.VecDotType pairs them with the weight type) into a layout
// made for the tiles: the int8 values of each token contiguous, and per 16
// elements a float scale (xs) and a float scaled sum (xm, for the weight
// types with mins). Weights are decoded to int8 in shared memory, 32
// elements at a time, with per-16 float scales (and mins); the integer dot
// of each 32 (or 16) elements is exact on the tensor cores
// (mma.m16n8k32 / m16n8k16 .s8.s8.s32) and scaled in float into the
// accumulators. The float order differs from the CPU's: the results agree
// within rounding (the op tests bound the NMSE), not bit for bit.
#include "common.cuh"

enum { Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14 };

// Tile: BM weight rows × BN tokens × KC elements per pass, 4 warps of
// 32 rows × 32 tokens. LD is a shared row's bytes (padded: the fragment
// loads of a warp fall in distinct banks).
#define BM 64
#define BN 64
#define KC 128
#define LD (KC + 16)
#define NG (KC / 16)
#define NGP (NG + 1)

__device__ __forceinline__ int sat8(float v) {
    int q = __float2int_rn(v);
    return q > 127 ? 127 : (q < -128 ? -128 : q);
}
__device__ __forceinline__ float f16r(float f) { return __half2float(__float2half_rn(f)); }

// ------------------------------------------------------------ activations
// mmq_act_q8: q8_0 (withSum 0) or q8_1 (withSum 1) per 32 elements, as
// quant_q8_0 / quant_q8_1 compute them; elements n..kp-1 are zero.
// A warp per 32 elements: grid (ceil(kp/256), tokens), 256 threads.
extern "C" __global__ void mmq_act_q8(const float* x, int8_t* qx, float* xs, float* xm, int n, int kp, int withSum) {
    int lane = threadIdx.x & 31, b = blockIdx.x * 8 + (threadIdx.x >> 5), t = blockIdx.y;
    if (b >= kp / 32) return; // whole warps
    int e = b * 32 + lane;
    float v = e < n ? x[(long long)t * n + e] : 0.f;
    float amax = warp_max(fabsf(v));
    float id = amax != 0.f ? 127.f / amax : 0.f;
    int q = sat8(v * id);
    qx[(long long)t * kp + e] = (int8_t)q;
    int sum = warp_sum_i(q);
    if (lane == 0) {
        float d = amax / 127.f;
        long long g = (long long)t * (kp / 16) + 2 * b;
        float dh = f16r(d);
        xs[g] = dh;
        xs[g + 1] = dh;
        xm[g] = withSum ? f16r(d * (float)sum) : 0.f;
        xm[g + 1] = 0.f;
    }
}

// mmq_act_q8k: q8_K per 256 elements (quantize_row_q8_K_ref, as
// quant_q8_k), the sums per 16 scaled by d. n = kp, a multiple of 256.
// grid (kp/256, tokens), 256 threads.
extern "C" __global__ void mmq_act_q8k(const float* x, int8_t* qx, float* xs, float* xm, int n, int kp) {
    __shared__ float sa[8];
    __shared__ int si[8];
    int t = threadIdx.x, lane = t & 31, w = t >> 5;
    const float* xb = x + (long long)blockIdx.y * n + blockIdx.x * 256;
    int8_t* qb = qx + (long long)blockIdx.y * kp + blockIdx.x * 256;
    long long g0 = (long long)blockIdx.y * (kp / 16) + blockIdx.x * 16;
    float v = xb[t];
    float a = fabsf(v);
    int idx = t;
    for (int o = 16; o > 0; o >>= 1) {
        float a2 = __shfl_xor_sync(0xffffffffu, a, o);
        int i2 = __shfl_xor_sync(0xffffffffu, idx, o);
        if (a2 > a || (a2 == a && i2 < idx)) { a = a2; idx = i2; }
    }
    if (lane == 0) { sa[w] = a; si[w] = idx; }
    __syncthreads();
    float ba = sa[0];
    int bi = si[0];
    for (int k = 1; k < 8; k++)
        if (sa[k] > ba || (sa[k] == ba && si[k] < bi)) { ba = sa[k]; bi = si[k]; }
    if (ba == 0.f) {
        qb[t] = 0;
        if (t < 16) { xs[g0 + t] = 0.f; xm[g0 + t] = 0.f; }
        return;
    }
    float iscale = -127.f / xb[bi];
    int q = __float2int_rn(iscale * v);
    if (q > 127) q = 127;
    qb[t] = (int8_t)q;
    int s = q;
    for (int o = 8; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    float d = 1.f / iscale;
    if ((t & 15) == 0) {
        xs[g0 + (t >> 4)] = d;
        xm[g0 + (t >> 4)] = d * (float)s;
    }
}

// ---------------------------------------------------------------- weights
// dec32<T>(row, e, q, sw, mw): elements e..e+31 of a weight row (e a
// multiple of 32) as int8 (packed four to a word, in element order), the
// float scale of each 16 (sw) and what multiplies the activations' scaled
// sum (mw, the types with mins).
template <int T> struct mq;
template <> struct mq<Q4_0> { enum { SB = 32, MINS = 0 }; };
template <> struct mq<Q4_1> { enum { SB = 32, MINS = 1 }; };
template <> struct mq<Q5_0> { enum { SB = 32, MINS = 0 }; };
template <> struct mq<Q5_1> { enum { SB = 32, MINS = 1 }; };
template <> struct mq<Q8_0> { enum { SB = 32, MINS = 0 }; };
template <> struct mq<Q2_K> { enum { SB = 16, MINS = 1 }; };
template <> struct mq<Q3_K> { enum { SB = 16, MINS = 0 }; };
template <> struct mq<Q4_K> { enum { SB = 32, MINS = 1 }; };
template <> struct mq<Q5_K> { enum { SB = 32, MINS = 1 }; };
template <> struct mq<Q6_K> { enum { SB = 16, MINS = 0 }; };
// isK: a K-quant (256-element super-blocks, integer sub-block scales).
template <int T> struct isK { enum { V = T >= Q2_K && T <= Q6_K }; };

__device__ __forceinline__ uint32_t spread4(uint32_t h) {
    return ((h & 1u) | ((h & 2u) << 7) | ((h & 4u) << 14) | ((h & 8u) << 21)) << 4;
}

template <int T> __device__ void dec32(const uint8_t* row, int e, uint32_t* q, float* sw, float* mw);

template <> __device__ void dec32<Q4_0>(const uint8_t* row, int e, uint32_t* q, float* sw, float* mw) {
    const uint8_t* b = row + (e >> 5) * 18;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        uint32_t w = (uint32_t)ld32h(b + 2 + 4 * j);
        q[j] = __vsub4(w & 0x0f0f0f0fu, 0x08080808u);
        q[4 + j] = __vsub4((w >> 4) & 0x0f0f0f0fu, 0x08080808u);
    }
    sw[0] = sw[1] = f16(b);
    mw[0] = mw[1] = 0.f;
}
template <> __device__ void dec32<Q4_1>(const uint8_t* row, int e, uint32_t* q, float* sw, float* mw) {
    const uint8_t* b = row + (e >> 5) * 20;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        uint32_t w = (uint32_t)ld32a(b + 4 + 4 * j);
        q[j] = w & 0x0f0f0f0fu;
        q[4 + j] = (w >> 4) & 0x0f0f0f0fu;
    }
    sw[0] = sw[1] = f16(b);
    mw[0] = mw[1] = f16(b + 2);
}
template <> __device__ void dec32<Q5_0>(const uint8_t* row, int e, uint32_t* q, float* sw, float* mw) {
    const uint8_t* b = row + (e >> 5) * 22;
    uint32_t qh = (uint32_t)ld32h(b + 2);
#pragma unroll
    for (int j = 0; j < 4; j++) {
        uint32_t w = (uint32_t)ld32h(b + 6 + 4 * j);
        q[j] = __vsub4((w & 0x0f0f0f0fu) | spread4((qh >> (4 * j)) & 0xfu), 0x10101010u);
        q[4 + j] = __vsub4(((w >> 4) & 0x0f0f0f0fu) | spread4((qh >> (16 + 4 * j)) & 0xfu), 0x10101010u);
    }
    sw[0] = sw[1] = f16(b);
    mw[0] = mw[1] = 0.f;
}
template <> __device__ void dec32<Q5_1>(const uint8_t* row, int e, uint32_t* q, float* sw, float* mw) {
    const uint8_t* b = row + (e >> 5) * 24;
    uint32_t qh = (uint32_t)ld32a(b + 4);
#pragma unroll
    for (int j = 0; j < 4; j++) {
        uint32_t w = (uint32_t)ld32a(b + 8 + 4 * j);
        q[j] = (w & 0x0f0f0f0fu) | spread4((qh >> (4 * j)) & 0xfu);
        q[4 + j] = ((w >> 4) & 0x0f0f0f0fu) | spread4((qh >> (16 + 4 * j)) & 0xfu);
    }
    sw[0] = sw[1] = f16(b);
    mw[0] = mw[1] = f16(b + 2);
}
template <> __device__ void dec32<Q8_0>(const uint8_t* row, int e, uint32_t* q, float* sw, float* mw) {
    const uint8_t* b = row + (e >> 5) * 34;
#pragma unroll
    for (int j = 0; j < 8; j++) q[j] = (uint32_t)ld32h(b + 2 + 4 * j);
    sw[0] = sw[1] = f16(b);
    mw[0] = mw[1] = 0.f;
}
// K-quants: deck32<T>(row, e, q, sc, mn, d, dm): the int8 values, the
// integer scale (sc) and min (mn) of each 16, and the super-block's d and
// dmin (the mins enter as −dmin·mn·Σx). The integer scales are applied
// to the exact block sums in int32, the floats once per k-step.
template <int T> __device__ void deck32(const uint8_t* row, int e, uint32_t* q, int* sc, int* mn, float* d, float* dm);

template <> __device__ void deck32<Q4_K>(const uint8_t* row, int e, uint32_t* q, int* sc, int* mn, float* d, float* dm) {
    const uint8_t* b = row + (e >> 8) * 144;
    int j = (e & 255) >> 5, shift = 4 * (j & 1);
    const uint8_t* qs = b + 16 + 32 * (j >> 1);
#pragma unroll
    for (int i = 0; i < 8; i++) q[i] = ((uint32_t)ld32a(qs + 4 * i) >> shift) & 0x0f0f0f0fu;
    int s, m;
    scale_min_k4(j, b + 4, &s, &m);
    sc[0] = sc[1] = s;
    mn[0] = mn[1] = m;
    *d = f16(b);
    *dm = f16(b + 2);
}
template <> __device__ void deck32<Q5_K>(const uint8_t* row, int e, uint32_t* q, int* sc, int* mn, float* d, float* dm) {
    const uint8_t* b = row + (e >> 8) * 176;
    int j = (e & 255) >> 5, shift = 4 * (j & 1);
    const uint8_t* qs = b + 48 + 32 * (j >> 1);
#pragma unroll
    for (int i = 0; i < 8; i++)
        q[i] = (((uint32_t)ld32a(qs + 4 * i) >> shift) & 0x0f0f0f0fu) | ((((uint32_t)ld32a(b + 16 + 4 * i) >> j) & 0x01010101u) << 4);
    int s, m;
    scale_min_k4(j, b + 4, &s, &m);
    sc[0] = sc[1] = s;
    mn[0] = mn[1] = m;
    *d = f16(b);
    *dm = f16(b + 2);
}
template <> __device__ void deck32<Q6_K>(const uint8_t* row, int e, uint32_t* q, int* sc, int* mn, float* d, float* dm) {
    const uint8_t* b = row + (e >> 8) * 210;
    int r = e & 255, half = r >> 7, quarter = (r & 127) >> 5;
    const uint8_t* ql = b + 64 * half + 32 * (quarter & 1);
    const uint8_t* qh = b + 128 + 32 * half;
    int nshift = 4 * (quarter >> 1), hshift = 2 * quarter;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        uint32_t lo = ((uint32_t)ld32h(ql + 4 * i) >> nshift) & 0x0f0f0f0fu;
        uint32_t hi = (((uint32_t)ld32h(qh + 4 * i) >> hshift) & 0x03030303u) << 4;
        q[i] = __vsub4(lo | hi, 0x20202020u);
    }
    const int8_t* s = (const int8_t*)(b + 192 + 8 * half);
    sc[0] = s[2 * quarter];
    sc[1] = s[2 * quarter + 1];
    mn[0] = mn[1] = 0;
    *d = f16(b + 208);
    *dm = 0.f;
}
template <> __device__ void deck32<Q3_K>(const uint8_t* row, int e, uint32_t* q, int* sc, int* mn, float* d, float* dm) {
    const uint8_t* b = row + (e >> 8) * 110;
    int r = e & 255, half = r >> 7, j = (r & 127) >> 5;
    const uint8_t* qs = b + 32 + 32 * half;
    int hbit = 4 * half + j;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        uint32_t lo = ((uint32_t)ld32h(qs + 4 * i) >> (2 * j)) & 0x03030303u;
        uint32_t hb = ((uint32_t)ld32h(b + 4 * i) >> hbit) & 0x01010101u;
        q[i] = __vsub4(lo | (hb << 2), 0x04040404u);
    }
    sc[0] = scale_q3k(8 * half + 2 * j, b + 96);
    sc[1] = scale_q3k(8 * half + 2 * j + 1, b + 96);
    mn[0] = mn[1] = 0;
    *d = f16(b + 108);
    *dm = 0.f;
}
template <> __device__ void deck32<Q2_K>(const uint8_t* row, int e, uint32_t* q, int* sc, int* mn, float* d, float* dm) {
    const uint8_t* b = row + (e >> 8) * 84;
    int r = e & 255, half = r >> 7, j = (r & 127) >> 5;
    const uint8_t* qs = b + 16 + 32 * half;
#pragma unroll
    for (int i = 0; i < 8; i++) q[i] = ((uint32_t)ld32a(qs + 4 * i) >> (2 * j)) & 0x03030303u;
#pragma unroll
    for (int s = 0; s < 2; s++) {
        int v = b[8 * half + 2 * j + s];
        sc[s] = v & 0xf;
        mn[s] = v >> 4;
    }
    *d = f16(b + 80);
    *dm = f16(b + 82);
}

// ------------------------------------------------------------------ mma
__device__ __forceinline__ void mma_k32(int* c, const int* a, const int* b) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
        : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(0));
}
__device__ __forceinline__ void mma_k16(int* c, const int* a, int b) {
    asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};"
        : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(b), "r"(0));
}
// The accumulating forms: c += a·b.
__device__ __forceinline__ void mma_k32_acc(int* c, const int* a, const int* b) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_k16_acc(int* c, const int* a, int b) {
    asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(b));
}

// mmq<T>: out[t][row] = W[row] · x[t] for a tile of BM rows × BN tokens.
// Up to three weights of one type and row length that multiply the same
// activations (q/k/v, gate/up) share a launch: blocks below tiles0 take
// W0, below tiles01 W1, the rest W2. W rows of wrb bytes hold n elements;
// qx rows kp bytes (kp: n rounded up to KC, zero-padded), xs/xm kp/16
// floats per token. grid (tiles of all weights, ceil(ntok/BN)), 128
// threads.
//
// The 32-element types scale each k-step's exact integer sums in float
// (d_w·d_x per 32). The K-quants keep a k-step's sums in int32 times
// their integer sub-block scales, the mins (Σ mn·x) through a second mma
// whose weights are the mins spread over their sub-block, and apply d,
// dmin and d_x once per KC elements (one super-block's d for all of them).
template <int T>
__device__ void mmq(const uint8_t* W0, const uint8_t* W1, const uint8_t* W2, float* out0, float* out1, float* out2, int rows0, int rows1, int rows2,
                    int tiles0, int tiles01, const int8_t* qx, const float* xs, const float* xm, int n, int kp, long long wrb, int ntok) {
    __shared__ __align__(16) int8_t sW[BM][LD];
    __shared__ __align__(16) int8_t sX[BN][LD];
    __shared__ float sWs[BM][NGP], sWm[BM][NGP], sXs[BN][NGP], sXm[BN][NGP];
    __shared__ float sD[BM], sDm[BM], sDx[BN];
    constexpr bool MINS = mq<T>::MINS, KQ = isK<T>::V;
    constexpr int SB = mq<T>::SB;
    int(*sSc)[NGP] = (int(*)[NGP])sWs; // K-quants: integer scales and mins
    int(*sMn)[NGP] = (int(*)[NGP])sWm;
    int bx = blockIdx.x;
    const uint8_t* W = W0;
    float* out = out0;
    int rows = rows0;
    if (bx >= tiles01) {
        W = W2, out = out2, rows = rows2, bx -= tiles01;
    } else if (bx >= tiles0) {
        W = W1, out = out1, rows = rows1, bx -= tiles0;
    }
    int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
    int wr = (warp & 1) * 32, wt = (warp >> 1) * 32;
    int row0 = bx * BM, tok0 = blockIdx.y * BN;
    int ngk = kp / 16;
    float acc[2][4][4];
#pragma unroll
    for (int a = 0; a < 2; a++)
#pragma unroll
        for (int b = 0; b < 4; b++)
#pragma unroll
            for (int c = 0; c < 4; c++) acc[a][b][c] = 0.f;
    int dr = tid >> 1; // the row this thread decodes
    const uint8_t* wrow = W + (long long)min(row0 + dr, rows - 1) * wrb;
    bool rowOK = row0 + dr < rows;

    for (int k0 = 0; k0 < n; k0 += KC) {
        // Decode: two 32-element groups of one row per thread.
#pragma unroll
        for (int gi = 0; gi < 2; gi++) {
            int gg = (tid & 1) * 2 + gi, e = k0 + 32 * gg;
            uint32_t q[8];
            bool ok = rowOK && e < n;
            if (KQ) {
                int sc[2] = {0, 0}, mn[2] = {0, 0};
                float d = 0.f, dm = 0.f;
                if (ok) deck32<T>(wrow, e, q, sc, mn, &d, &dm);
                sSc[dr][2 * gg] = sc[0];
                sSc[dr][2 * gg + 1] = sc[1];
                if (MINS) {
                    sMn[dr][2 * gg] = mn[0] * 0x01010101;
                    sMn[dr][2 * gg + 1] = mn[1] * 0x01010101;
                }
                if (gg == 0) {
                    sD[dr] = d;
                    sDm[dr] = dm;
                }
            } else {
                float sw[2] = {0.f, 0.f}, mw[2] = {0.f, 0.f};
                if (ok) dec32<T>(wrow, e, q, sw, mw);
                sWs[dr][2 * gg] = sw[0];
                sWs[dr][2 * gg + 1] = sw[1];
                if (MINS) {
                    sWm[dr][2 * gg] = mw[0];
                    sWm[dr][2 * gg + 1] = mw[1];
                }
            }
            if (!ok) {
#pragma unroll
                for (int i = 0; i < 8; i++) q[i] = 0;
            }
            uint4* d4 = (uint4*)&sW[dr][32 * gg];
            d4[0] = make_uint4(q[0], q[1], q[2], q[3]);
            d4[1] = make_uint4(q[4], q[5], q[6], q[7]);
        }
        // Activations: BN tokens × KC bytes, 16 bytes per load.
#pragma unroll
        for (int i = 0; i < BN * KC / 16 / 128; i++) {
            int idx = tid + 128 * i, tk = idx / (KC / 16), c = idx % (KC / 16);
            int tt = tok0 + tk;
            uint4 v = make_uint4(0, 0, 0, 0);
            if (tt < ntok) v = *(const uint4*)(qx + (long long)tt * kp + k0 + 16 * c);
            *(uint4*)&sX[tk][16 * c] = v;
        }
        if (KQ) {
            if (tid < BN) sDx[tid] = tok0 + tid < ntok ? xs[(long long)(tok0 + tid) * ngk + k0 / 16] : 0.f;
        } else {
#pragma unroll
            for (int i = 0; i < BN * NG / 128; i++) {
                int idx = tid + 128 * i, tk = idx / NG, c = idx % NG;
                int tt = tok0 + tk;
                long long o = (long long)tt * ngk + k0 / 16 + c;
                sXs[tk][c] = tt < ntok ? xs[o] : 0.f;
                if (MINS) sXm[tk][c] = tt < ntok ? xm[o] : 0.f;
            }
        }
        __syncthreads();

        int isum[2][4][4], imin[2][4][4];
        if (KQ) {
#pragma unroll
            for (int a = 0; a < 2; a++)
#pragma unroll
                for (int b = 0; b < 4; b++)
#pragma unroll
                    for (int c = 0; c < 4; c++) isum[a][b][c] = imin[a][b][c] = 0;
        }
#pragma unroll
        for (int s = 0; s < KC / SB; s++) {
            int a[2][4], bf[4][2];
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                const int8_t* p = &sW[wr + 16 * mt + g][SB * s + 4 * t4];
                a[mt][0] = *(const int*)p;
                a[mt][1] = *(const int*)(p + 8 * LD);
                if (SB == 32) {
                    a[mt][2] = *(const int*)(p + 16);
                    a[mt][3] = *(const int*)(p + 8 * LD + 16);
                }
            }
#pragma unroll
            for (int nt = 0; nt < 4; nt++) {
                const int8_t* p = &sX[wt + 8 * nt + g][SB * s + 4 * t4];
                bf[nt][0] = *(const int*)p;
                if (SB == 32) bf[nt][1] = *(const int*)(p + 16);
            }
            int gs = SB == 32 ? 2 * s : s; // the 16-group whose scales apply
            if (KQ) {
                int sc[2][2], am[2][4];
#pragma unroll
                for (int mt = 0; mt < 2; mt++) {
                    sc[mt][0] = sSc[wr + 16 * mt + g][gs];
                    sc[mt][1] = sSc[wr + 16 * mt + g + 8][gs];
                    if (MINS) {
                        am[mt][0] = am[mt][2] = sMn[wr + 16 * mt + g][gs];
                        am[mt][1] = am[mt][3] = sMn[wr + 16 * mt + g + 8][gs];
                    }
                }
#pragma unroll
                for (int mt = 0; mt < 2; mt++)
#pragma unroll
                    for (int nt = 0; nt < 4; nt++) {
                        int c[4];
                        if (SB == 32) mma_k32(c, a[mt], bf[nt]);
                        else mma_k16(c, a[mt], bf[nt][0]);
#pragma unroll
                        for (int i = 0; i < 4; i++) isum[mt][nt][i] += c[i] * sc[mt][i >> 1];
                        if (MINS) {
                            if (SB == 32) mma_k32_acc(imin[mt][nt], am[mt], bf[nt]);
                            else mma_k16_acc(imin[mt][nt], am[mt], bf[nt][0]);
                        }
                    }
            } else {
                float ws[2][2], xsc[4][2];
#pragma unroll
                for (int mt = 0; mt < 2; mt++) {
                    ws[mt][0] = sWs[wr + 16 * mt + g][gs];
                    ws[mt][1] = sWs[wr + 16 * mt + g + 8][gs];
                }
#pragma unroll
                for (int nt = 0; nt < 4; nt++) {
                    xsc[nt][0] = sXs[wt + 8 * nt + 2 * t4][gs];
                    xsc[nt][1] = sXs[wt + 8 * nt + 2 * t4 + 1][gs];
                }
#pragma unroll
                for (int mt = 0; mt < 2; mt++)
#pragma unroll
                    for (int nt = 0; nt < 4; nt++) {
                        int c[4];
                        if (SB == 32) mma_k32(c, a[mt], bf[nt]);
                        else mma_k16(c, a[mt], bf[nt][0]);
#pragma unroll
                        for (int i = 0; i < 4; i++) acc[mt][nt][i] += (float)c[i] * (ws[mt][i >> 1] * xsc[nt][i & 1]);
                    }
            }
        }
        if (KQ) {
            float dw[2][2], dmw[2][2], dx[4][2];
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    dw[mt][h] = sD[wr + 16 * mt + g + 8 * h];
                    dmw[mt][h] = MINS ? sDm[wr + 16 * mt + g + 8 * h] : 0.f;
                }
#pragma unroll
            for (int nt = 0; nt < 4; nt++) {
                dx[nt][0] = sDx[wt + 8 * nt + 2 * t4];
                dx[nt][1] = sDx[wt + 8 * nt + 2 * t4 + 1];
            }
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int nt = 0; nt < 4; nt++)
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        float v = dw[mt][i >> 1] * (float)isum[mt][nt][i];
                        if (MINS) v -= dmw[mt][i >> 1] * (float)imin[mt][nt][i];
                        acc[mt][nt][i] += dx[nt][i & 1] * v;
                    }
        } else if (MINS) {
            // Q4_1 / Q5_1: the mins times the activations' sums (q8_1's s, in
            // the first 16-group of each 32).
#pragma unroll
            for (int s = 0; s < NG; s += 2) {
                float wm[2][2], xmv[4][2];
#pragma unroll
                for (int mt = 0; mt < 2; mt++) {
                    wm[mt][0] = sWm[wr + 16 * mt + g][s];
                    wm[mt][1] = sWm[wr + 16 * mt + g + 8][s];
                }
#pragma unroll
                for (int nt = 0; nt < 4; nt++) {
                    xmv[nt][0] = sXm[wt + 8 * nt + 2 * t4][s];
                    xmv[nt][1] = sXm[wt + 8 * nt + 2 * t4 + 1][s];
                }
#pragma unroll
                for (int mt = 0; mt < 2; mt++)
#pragma unroll
                    for (int nt = 0; nt < 4; nt++)
#pragma unroll
                        for (int i = 0; i < 4; i++) acc[mt][nt][i] += wm[mt][i >> 1] * xmv[nt][i & 1];
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int nt = 0; nt < 4; nt++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                int r = row0 + wr + 16 * mt + g + 8 * (i >> 1);
                int tk = tok0 + wt + 8 * nt + 2 * t4 + (i & 1);
                if (r < rows && tk < ntok) out[(long long)tk * rows + r] = acc[mt][nt][i];
            }
}

#define MMQ(name, T) \
    extern "C" __global__ void __launch_bounds__(128) mmq_##name(const uint8_t* W0, const uint8_t* W1, const uint8_t* W2, float* out0, float* out1, \
                                                               float* out2, int rows0, int rows1, int rows2, int tiles0, int tiles01, \
                                                               const int8_t* qx, const float* xs, const float* xm, int n, int kp, long long wrb, int ntok) { \
        mmq<T>(W0, W1, W2, out0, out1, out2, rows0, rows1, rows2, tiles0, tiles01, qx, xs, xm, n, kp, wrb, ntok); }
MMQ(q4_0, Q4_0) MMQ(q4_1, Q4_1) MMQ(q5_0, Q5_0) MMQ(q5_1, Q5_1) MMQ(q8_0, Q8_0)
MMQ(q2_k, Q2_K) MMQ(q3_k, Q3_K) MMQ(q4_k, Q4_K) MMQ(q5_k, Q5_K) MMQ(q6_k, Q6_K)
