// Tensor-core mat-mul for batches of tokens (prefill): "mmq". Activations
// are quantized once per mat-mul with the CPU's numerics (q8_0, q8_1 or
// q8_K, as quant.VecDotType pairs them with the weight type) into a layout
// made for the tiles: the int8 values of each token contiguous, and per 16
// elements a float scale (xs) and a float scaled sum (xm, for the weight
// types with mins). Weights are decoded to int8 in shared memory, 32
// elements at a time, with per-16 float scales (and mins); the integer dot
// of each 32 (or 16) elements is exact on the tensor cores
// (mma.m16n8k32 / m16n8k16 .s8.s8.s32), and the float part runs as
// core/quant's vec-dot runs it (compute_step): bit for bit the CPU's.
// Q5_0, Q5_1 and Q2_K are not here: their CPU dots keep eight float lanes
// of 4-element integer sums (ggml's AVX2 lanes), which a 32-element mma
// does not give; they take the batched mat-vec.
#include "common.cuh"
#include "mmqact.cuh"

enum { Q4_0 = 2, Q4_1 = 3, Q8_0 = 8, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14 };

// Tile: BM weight rows × BN tokens × KC elements per pass, 4 warps of
// 32 rows × 32 tokens. LD is a shared row's bytes (padded: the fragment
// loads of a warp fall in distinct banks).
#define BM 64
#define BN 64
#define KC 128
#define LD (KC + 16)
#define NG (KC / 16)
#define NGP (NG + 1)

// ------------------------------------------------------------ activations
// mmq_act_q8: q8_0 (withSum 0) or q8_1 (withSum 1) per 32 elements, as
// quant_q8_0 / quant_q8_1 compute them; elements n..kp-1 are zero.
// A warp per 32 elements: grid (ceil(kp/256), tokens), 256 threads.
extern "C" __global__ void mmq_act_q8(const float* x, int8_t* qx, float* xs, float* xm, int n, int kp, int withSum) { PDL_ENTRY();
    int lane = threadIdx.x & 31, b = blockIdx.x * 8 + (threadIdx.x >> 5), t = blockIdx.y;
    if (b >= kp / 32) return; // whole warps
    int e = b * 32 + lane;
    mmq_q8_lane(e < n ? x[(long long)t * n + e] : 0.f, lane, qx, xs, xm, t, b, kp, withSum);
}

// mmq_act_q8k: q8_K per 256 elements (mmq_q8k_warp). n = kp, a multiple
// of 256. A warp per super-block, eight consecutive elements a lane: grid
// (ceil(kp/2048), tokens), 256 threads.
extern "C" __global__ void mmq_act_q8k(const float* x, int8_t* qx, float* xs, float* xm, int n, int kp) { PDL_ENTRY();
    int lane = threadIdx.x & 31, sb = blockIdx.x * 8 + (threadIdx.x >> 5);
    if (sb >= kp / 256) return; // whole warps
    const float* xb = x + (long long)blockIdx.y * n + sb * 256;
    float v[8];
    *(float4*)&v[0] = *(const float4*)(xb + 8 * lane);
    *(float4*)&v[4] = *(const float4*)(xb + 8 * lane + 4);
    mmq_q8k_warp(v, lane, qx + (long long)blockIdx.y * kp + sb * 256, xs, xm, (long long)blockIdx.y * (kp / 16) + sb * 16);
}

// ---------------------------------------------------------------- weights
// dec32<T>(row, e, q, sw, mw): elements e..e+31 of a weight row (e a
// multiple of 32) as int8 (packed four to a word, in element order), the
// float scale of each 16 (sw) and what multiplies the activations' scaled
// sum (mw, the types with mins).
template <int T> struct mq;
template <> struct mq<Q4_0> { enum { SB = 32, MINS = 0 }; };
template <> struct mq<Q4_1> { enum { SB = 32, MINS = 1 }; };
template <> struct mq<Q8_0> { enum { SB = 32, MINS = 0 }; };
template <> struct mq<Q3_K> { enum { SB = 16, MINS = 0 }; };
template <> struct mq<Q4_K> { enum { SB = 32, MINS = 1 }; };
template <> struct mq<Q5_K> { enum { SB = 32, MINS = 1 }; };
template <> struct mq<Q6_K> { enum { SB = 16, MINS = 0 }; };
// isK: a K-quant (256-element super-blocks, integer sub-block scales).
template <int T> struct isK { enum { V = T >= Q3_K && T <= Q6_K }; };

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
// qm: 3 for a whole super-block at row; 1 for a compact half (mmqp's
// 16-byte copies of a Q4_K / Q5_K k-step: the header, Q5_K's high bits,
// and only the 64 bytes of low bits of the k-step's four sub-blocks).
template <int T> __device__ void deck32(const uint8_t* row, int e, uint32_t* q, int* sc, int* mn, float* d, float* dm, int qm = 3);

template <> __device__ void deck32<Q4_K>(const uint8_t* row, int e, uint32_t* q, int* sc, int* mn, float* d, float* dm, int qm) {
    const uint8_t* b = row + (e >> 8) * 144;
    int j = (e & 255) >> 5, shift = 4 * (j & 1);
    const uint8_t* qs = b + 16 + 32 * ((j >> 1) & qm);
#pragma unroll
    for (int i = 0; i < 8; i++) q[i] = ((uint32_t)ld32a(qs + 4 * i) >> shift) & 0x0f0f0f0fu;
    int s, m;
    scale_min_k4(j, b + 4, &s, &m);
    sc[0] = sc[1] = s;
    mn[0] = mn[1] = m;
    *d = f16(b);
    *dm = f16(b + 2);
}
template <> __device__ void deck32<Q5_K>(const uint8_t* row, int e, uint32_t* q, int* sc, int* mn, float* d, float* dm, int qm) {
    const uint8_t* b = row + (e >> 8) * 176;
    int j = (e & 255) >> 5, shift = 4 * (j & 1);
    const uint8_t* qs = b + 48 + 32 * ((j >> 1) & qm);
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
template <> __device__ void deck32<Q6_K>(const uint8_t* row, int e, uint32_t* q, int* sc, int* mn, float* d, float* dm, int) {
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
template <> __device__ void deck32<Q3_K>(const uint8_t* row, int e, uint32_t* q, int* sc, int* mn, float* d, float* dm, int) {
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

// One k-step of a tile in shared memory: the decoded weights (BM rows of
// LD bytes), their per-16 scales (float for the 32-element types; for the
// K-quants integer scales and mins spread to four bytes, and per row d and
// dmin), the activations (BN tokens of LD bytes) and their per-16 scales
// and scaled sums (xstride floats per token).
struct Tile {
    int8_t (*W)[LD];
    float (*Ws)[NGP];
    float (*Wm)[NGP];
    float *D, *Dm;
    int8_t (*X)[LD];
    const float *Xs, *Xm;
    int xstride;
};

// decode_step<T, NGT>: this thread's NGT 32-element groups (from group
// part·NGT of the k-step's four) of row dr for elements k0.. of n into
// the tile. row holds the row's blocks from
// element ebase on (the whole row, or a k-step's blocks copied to shared
// memory); rowOK: a row of the weight; qm: deck32's (a compact half).
template <int T, int NGT>
__device__ __forceinline__ void decode_step(const Tile& s, const uint8_t* row, int ebase, bool rowOK, int dr, int part, int k0, int n, int qm = 3) {
    constexpr bool MINS = mq<T>::MINS, KQ = isK<T>::V;
    int(*sSc)[NGP] = (int(*)[NGP])s.Ws;
    int(*sMn)[NGP] = (int(*)[NGP])s.Wm;
#pragma unroll
    for (int gi = 0; gi < NGT; gi++) {
        int gg = part * NGT + gi, e = k0 + 32 * gg;
        uint32_t q[8];
        bool ok = rowOK && e < n;
        if (KQ) {
            int sc[2] = {0, 0}, mn[2] = {0, 0};
            float d = 0.f, dm = 0.f;
            if (ok) deck32<T>(row, e - ebase, q, sc, mn, &d, &dm, qm);
            sSc[dr][2 * gg] = sc[0];
            sSc[dr][2 * gg + 1] = sc[1];
            // the mins of the super-block's eight sub-blocks, a byte each
            // (the A operand of the mins' mma: compute_step)
            if (MINS) ((uint8_t*)&sMn[dr][0])[4 * ((k0 / KC) & 1) + gg] = (uint8_t)mn[0];
            if (gg == 0) {
                s.D[dr] = d;
                s.Dm[dr] = dm;
            }
        } else {
            float sw[2] = {0.f, 0.f}, mw[2] = {0.f, 0.f};
            if (ok) dec32<T>(row, e - ebase, q, sw, mw);
            s.Ws[dr][2 * gg] = sw[0];
            s.Ws[dr][2 * gg + 1] = sw[1];
            if (MINS) {
                s.Wm[dr][2 * gg] = mw[0];
                s.Wm[dr][2 * gg + 1] = mw[1];
            }
        }
        if (!ok) {
#pragma unroll
            for (int i = 0; i < 8; i++) q[i] = 0;
        }
        uint4* d4 = (uint4*)&s.W[dr][32 * gg];
        d4[0] = make_uint4(q[0], q[1], q[2], q[3]);
        d4[1] = make_uint4(q[4], q[5], q[6], q[7]);
    }
}

// compute_step<T>: a warp's 32 rows (from wr) × 32 tokens (from wt) of one
// k-step into acc, with the float part of core/quant's vec-dot for the
// type, operation for operation, in block order (each output's chain runs
// on one thread; the integer block sums are exact on the tensor cores):
//   Q4_0: acc += float(sumi)·(d_w·d_x)           (mul, then add)
//   Q8_0: acc = fma(float(sumi), d_w·d_x, acc)
//   Q4_1: acc = fma(d_w·d_x, float(sumi), acc); acc = fma(m_w, s_x, acc)
// per 32-block; the K-quants keep the integer sums of a whole super-block
// (sub-block scales applied in int32) across its two k-steps (sbEnd: the
// second); the mins' integer sum Σ_j mn_j·bsum_j (bsum_j: the activations'
// sum over sub-block j) is two m16n8k16 mma at sbEnd over the rows' eight
// mins (bytes, sMn) and the tokens' sums split as 128·hi + lo (bytes,
// mmq_act_q8k), then per super-block
//   Q3_K, Q6_K: acc += (d·d_x)·float(isum)
//   Q4_K: acc += (d_x·d)·float(isum) − (d_x·dmin)·float(mins)
//   Q5_K: acc = fma(float(isum), d·d_x, acc); acc = fma(−float(mins), dmin·d_x, acc).
template <int T>
__device__ __forceinline__ void compute_step(const Tile& s, float (&acc)[2][4][4], int (&isum)[2][4][4], bool sbEnd, int wr, int wt, int g, int t4) {
    constexpr bool MINS = mq<T>::MINS, KQ = isK<T>::V;
    constexpr int SB = mq<T>::SB;
    int(*sSc)[NGP] = (int(*)[NGP])s.Ws;
    int(*sMn)[NGP] = (int(*)[NGP])s.Wm;
#pragma unroll
    for (int st = 0; st < KC / SB; st++) {
        int a[2][4], bf[4][2];
#pragma unroll
        for (int mt = 0; mt < 2; mt++) {
            const int8_t* p = &s.W[wr + 16 * mt + g][SB * st + 4 * t4];
            a[mt][0] = *(const int*)p;
            a[mt][1] = *(const int*)(p + 8 * LD);
            if (SB == 32) {
                a[mt][2] = *(const int*)(p + 16);
                a[mt][3] = *(const int*)(p + 8 * LD + 16);
            }
        }
#pragma unroll
        for (int nt = 0; nt < 4; nt++) {
            const int8_t* p = &s.X[wt + 8 * nt + g][SB * st + 4 * t4];
            bf[nt][0] = *(const int*)p;
            if (SB == 32) bf[nt][1] = *(const int*)(p + 16);
        }
        int gs = SB == 32 ? 2 * st : st; // the 16-group whose scales apply
        if (KQ) {
            int sc[2][2];
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                sc[mt][0] = sSc[wr + 16 * mt + g][gs];
                sc[mt][1] = sSc[wr + 16 * mt + g + 8][gs];
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
                }
        } else {
            float ws[2][2], xsc[4][2], wm[2][2], xmv[4][2];
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                ws[mt][0] = s.Ws[wr + 16 * mt + g][gs];
                ws[mt][1] = s.Ws[wr + 16 * mt + g + 8][gs];
                if (MINS) {
                    wm[mt][0] = s.Wm[wr + 16 * mt + g][gs];
                    wm[mt][1] = s.Wm[wr + 16 * mt + g + 8][gs];
                }
            }
#pragma unroll
            for (int nt = 0; nt < 4; nt++) {
                xsc[nt][0] = s.Xs[(wt + 8 * nt + 2 * t4) * s.xstride + gs];
                xsc[nt][1] = s.Xs[(wt + 8 * nt + 2 * t4 + 1) * s.xstride + gs];
                if (MINS) {
                    xmv[nt][0] = s.Xm[(wt + 8 * nt + 2 * t4) * s.xstride + gs];
                    xmv[nt][1] = s.Xm[(wt + 8 * nt + 2 * t4 + 1) * s.xstride + gs];
                }
            }
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int nt = 0; nt < 4; nt++) {
                    int c[4];
                    mma_k32(c, a[mt], bf[nt]);
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        float dd = __fmul_rn(ws[mt][i >> 1], xsc[nt][i & 1]);
                        float& o = acc[mt][nt][i];
                        if (T == Q4_0) o = __fadd_rn(o, __fmul_rn((float)c[i], dd));
                        else if (T == Q8_0) o = __fmaf_rn((float)c[i], dd, o);
                        else o = __fmaf_rn(wm[mt][i >> 1], xmv[nt][i & 1], __fmaf_rn(dd, (float)c[i], o)); // Q4_1
                    }
                }
        }
    }
    if (KQ && sbEnd) {
        // The mins' sums: A = a row's eight mins (k 0..7: bytes of words
        // t4&1, for t4 < 2 in the lo mma, t4 >= 2 in the hi one), B = a
        // token's lo (k 0..7) and hi (k 8..15) bytes: lo·mn + 128·hi·mn.
        int imin[2][4][4];
        if (MINS) {
            int am[2][2], bm[4];
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                am[mt][0] = sMn[wr + 16 * mt + g][t4 & 1];
                am[mt][1] = sMn[wr + 16 * mt + g + 8][t4 & 1];
            }
#pragma unroll
            for (int nt = 0; nt < 4; nt++) bm[nt] = __float_as_int(s.Xm[(wt + 8 * nt + g) * s.xstride + t4]);
            const bool lo = t4 < 2;
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                int alo[2] = {lo ? am[mt][0] : 0, lo ? am[mt][1] : 0}, ahi[2] = {lo ? 0 : am[mt][0], lo ? 0 : am[mt][1]};
#pragma unroll
                for (int nt = 0; nt < 4; nt++) {
                    int cl[4], ch[4];
                    mma_k16(cl, alo, bm[nt]);
                    mma_k16(ch, ahi, bm[nt]);
#pragma unroll
                    for (int i = 0; i < 4; i++) imin[mt][nt][i] = cl[i] + 128 * ch[i];
                }
            }
        }
        float dw[2][2], dmw[2][2], dx[4][2];
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                dw[mt][h] = s.D[wr + 16 * mt + g + 8 * h];
                dmw[mt][h] = MINS ? s.Dm[wr + 16 * mt + g + 8 * h] : 0.f;
            }
#pragma unroll
        for (int nt = 0; nt < 4; nt++) {
            dx[nt][0] = s.Xs[(wt + 8 * nt + 2 * t4) * s.xstride];
            dx[nt][1] = s.Xs[(wt + 8 * nt + 2 * t4 + 1) * s.xstride];
        }
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int nt = 0; nt < 4; nt++)
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    float d = dw[mt][i >> 1], dm = dmw[mt][i >> 1], x = dx[nt][i & 1];
                    float is = (float)isum[mt][nt][i], im = MINS ? (float)imin[mt][nt][i] : 0.f;
                    float& o = acc[mt][nt][i];
                    if (T == Q4_K) o = __fadd_rn(o, __fsub_rn(__fmul_rn(__fmul_rn(x, d), is), __fmul_rn(__fmul_rn(x, dm), im)));
                    else if (T == Q5_K) o = __fmaf_rn(-im, __fmul_rn(dm, x), __fmaf_rn(is, __fmul_rn(d, x), o));
                    else o = __fadd_rn(o, __fmul_rn(__fmul_rn(d, x), is)); // Q3_K, Q6_K
                    isum[mt][nt][i] = 0;
                }
    }
}

// The launch's weight for this block: blocks below tiles0 take W0, below
// tiles01 W1, the rest W2 (bx becomes the row tile within it).
struct Target {
    const uint8_t* W;
    float* out;
    int rows, bx;
};
__device__ __forceinline__ Target target(const uint8_t* W0, const uint8_t* W1, const uint8_t* W2, float* out0, float* out1, float* out2, int rows0,
                                         int rows1, int rows2, int tiles0, int tiles01) {
    int bx = blockIdx.x;
    if (bx >= tiles01) return Target{W2, out2, rows2, bx - tiles01};
    if (bx >= tiles0) return Target{W1, out1, rows1, bx - tiles0};
    return Target{W0, out0, rows0, bx};
}

__device__ __forceinline__ void store_tile(const Target& tg, const float (&acc)[2][4][4], int row0, int tok0, int wr, int wt, int g, int t4, int ntok) {
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int nt = 0; nt < 4; nt++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                int r = row0 + wr + 16 * mt + g + 8 * (i >> 1);
                int tk = tok0 + wt + 8 * nt + 2 * t4 + (i & 1);
                if (r < tg.rows && tk < ntok) tg.out[(long long)tk * tg.rows + r] = acc[mt][nt][i];
            }
}

// mmq<T>: out[t][row] = W[row] · x[t] for a tile of BM rows × BN tokens.
// Up to three weights of one type and row length that multiply the same
// activations (q/k/v, gate/up) share a launch (see target). W rows of wrb
// bytes hold n elements; qx rows kp bytes (kp: n rounded up to KC,
// zero-padded), xs/xm kp/16 floats per token. grid (tiles of all weights,
// ceil(ntok/BN)), 128 threads. Each k-step loads, decodes, then multiplies.
template <int T>
__device__ void mmq(const uint8_t* W0, const uint8_t* W1, const uint8_t* W2, float* out0, float* out1, float* out2, int rows0, int rows1, int rows2,
                    int tiles0, int tiles01, const int8_t* qx, const float* xs, const float* xm, int n, int kp, long long wrb, int ntok) {
    __shared__ __align__(16) int8_t sW[BM][LD];
    __shared__ __align__(16) int8_t sX[BN][LD];
    __shared__ float sWs[BM][NGP], sWm[BM][NGP], sXs[BN][NGP], sXm[BN][NGP];
    __shared__ float sD[BM], sDm[BM];
    Target tg = target(W0, W1, W2, out0, out1, out2, rows0, rows1, rows2, tiles0, tiles01);
    Tile s{sW, sWs, sWm, sD, sDm, sX, &sXs[0][0], &sXm[0][0], NGP};
    int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
    int wr = (warp & 1) * 32, wt = (warp >> 1) * 32;
    int row0 = tg.bx * BM, tok0 = blockIdx.y * BN;
    int ngk = kp / 16;
    float acc[2][4][4];
    int isum[2][4][4]; // a K-quant super-block's integer sums
#pragma unroll
    for (int a = 0; a < 2; a++)
#pragma unroll
        for (int b = 0; b < 4; b++)
#pragma unroll
            for (int c = 0; c < 4; c++) acc[a][b][c] = isum[a][b][c] = 0;
    int dr = tid >> 1; // the row this thread decodes
    const uint8_t* wrow = tg.W + (long long)min(row0 + dr, tg.rows - 1) * wrb;
    bool rowOK = row0 + dr < tg.rows;

    for (int k0 = 0; k0 < n; k0 += KC) {
        decode_step<T, 2>(s, wrow, 0, rowOK, dr, tid & 1, k0, n);
#pragma unroll
        for (int i = 0; i < BN * KC / 16 / 128; i++) {
            int idx = tid + 128 * i, tk = idx / (KC / 16), c = idx % (KC / 16);
            int tt = tok0 + tk;
            uint4 v = make_uint4(0, 0, 0, 0);
            if (tt < ntok) v = *(const uint4*)(qx + (long long)tt * kp + k0 + 16 * c);
            *(uint4*)&sX[tk][16 * c] = v;
        }
#pragma unroll
        for (int i = 0; i < BN * NG / 128; i++) {
            int idx = tid + 128 * i, tk = idx / NG, c = idx % NG;
            int tt = tok0 + tk;
            long long o = (long long)tt * ngk + k0 / 16 + c;
            sXs[tk][c] = tt < ntok ? xs[o] : 0.f;
            if (mq<T>::MINS) sXm[tk][c] = tt < ntok ? xm[o] : 0.f;
        }
        __syncthreads();
        compute_step<T>(s, acc, isum, (k0 / KC) & 1, wr, wt, g, t4);
        __syncthreads();
    }
    store_tile(tg, acc, row0, tok0, wr, wt, g, t4, ntok);
}

// ------------------------------------------------------ pipelined (mmqp)
// The same tiles with the next k-step's bytes in flight while this one is
// decoded and multiplied: cp.async copies the raw weight blocks of the
// tile's rows, the activations and their scales into a second stage of
// shared memory. The raw bytes of a row's k-step start at a 2-aligned
// address for some types: the copy starts at the 4-aligned address below
// (RW words a row) and the decoder reads past the offset.
template <int T> struct rawf;
template <> struct rawf<Q4_0> { enum { WB = 18, BPS = 4 }; };
template <> struct rawf<Q4_1> { enum { WB = 20, BPS = 4 }; };
template <> struct rawf<Q8_0> { enum { WB = 34, BPS = 4 }; };
template <> struct rawf<Q3_K> { enum { WB = 110, BPS = 1 }; };
template <> struct rawf<Q4_K> { enum { WB = 144, BPS = 1 }; };
template <> struct rawf<Q5_K> { enum { WB = 176, BPS = 1 }; };
template <> struct rawf<Q6_K> { enum { WB = 210, BPS = 1 }; };
// RW: 32-bit words of a row's raw k-step (BPS blocks: the k-step's four
// 32-blocks, or the super-block holding the k-step's half), plus one for
// a 2-byte misalignment.
template <int T> struct rawsz { enum { RW = (rawf<T>::BPS * rawf<T>::WB + 2 + 3) / 4 }; };

// mmqpShared(T, bn) mirrors this in mma.go (BNT: the tile's tokens).
template <int T, int BNT> struct mmqpmem {
    enum {
        W = BM * LD, X = BNT * LD, RAW = BM * rawsz<T>::RW * 4, SC = BM * NGP * 4, XS = BNT * NG * 4,
        TOTAL = W + 2 * X + 2 * RAW + 2 * SC + 4 * XS + 2 * BM * 4
    };
};

// cp_async4n copies the first n (1..4) bytes of a 4-aligned word, zeros
// after them: a row's last word reads nothing past its blocks.
__device__ __forceinline__ void cp_async4n(void* dst, const void* src, int n) {
    uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(d), "l"(src), "r"(n));
}
// cp_async16z copies 16 bytes, or fills 16 zeros when !ok (nothing read).
__device__ __forceinline__ void cp_async16z(void* dst, const void* src, bool ok) {
    uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    int n = ok ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(n));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
__device__ __forceinline__ void cp_async_wait0() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }

// mmqp<T, NT>: NT threads (128 or 256), tiles of BM rows × BNT = NT/2
// tokens: NT/32 warps of 32 rows × 32 tokens, two across the rows; NT/BM
// threads copy and decode each weight row (four 32-groups a k-step).
template <int T, int NT>
__device__ void mmqp(const uint8_t* W0, const uint8_t* W1, const uint8_t* W2, float* out0, float* out1, float* out2, int rows0, int rows1, int rows2,
                     int tiles0, int tiles01, const int8_t* qx, const float* xs, const float* xm, int n, int kp, long long wrb, int ntok) {
    constexpr int RW = rawsz<T>::RW, WB = rawf<T>::WB, BPS = rawf<T>::BPS, EPB = KC / BPS > 32 ? 256 : 32; // elements a raw block
    constexpr bool XM = mq<T>::MINS; // (the K-quants': the packed block sums)
    constexpr int BNT = NT / 2, TPR = NT / BM, NGT = 4 / TPR;
    typedef mmqpmem<T, BNT> M;
    extern __shared__ __align__(16) uint8_t mmq_smem[];
    // Offsets in the dynamic shared memory (stage st adds st·size).
    constexpr int OW = 0, OX = OW + M::W, ORAW = OX + 2 * M::X, OWS = ORAW + 2 * M::RAW, OWM = OWS + M::SC, OXS = OWM + M::SC,
                  OXM = OXS + 2 * M::XS, OD = OXM + 2 * M::XS, ODM = OD + BM * 4;

    Target tg = target(W0, W1, W2, out0, out1, out2, rows0, rows1, rows2, tiles0, tiles01);
    int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
    int wr = (warp & 1) * 32, wt = (warp >> 1) * 32;
    int row0 = tg.bx * BM, tok0 = blockIdx.y * BNT;
    int ngk = kp / 16, nblk = n / EPB;
    uint32_t dsz;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dsz));
    if (dsz < (uint32_t)M::TOTAL) {
        // Launched with less shared memory than the tiles take (the host's
        // mmqpShared disagrees): NaN outputs, which no test lets pass.
        for (int i = tid; i < BM * BNT; i += NT) {
            int r = row0 + i % BM, tk = tok0 + i / BM;
            if (r < tg.rows && tk < ntok) tg.out[(long long)tk * tg.rows + r] = __int_as_float(0x7fc00000);
        }
        return;
    }
    float acc[2][4][4];
    int isum[2][4][4]; // a K-quant super-block's integer sums
#pragma unroll
    for (int a = 0; a < 2; a++)
#pragma unroll
        for (int b = 0; b < 4; b++)
#pragma unroll
            for (int c = 0; c < 4; c++) acc[a][b][c] = isum[a][b][c] = 0;

    // Each thread copies the raw words of its decode row dr (every TPR-th
    // from tid%TPR on), then decodes its groups of that row.
    int dr = tid / TPR;
    bool rowOK = row0 + dr < tg.rows;
    const uint8_t* wrow = tg.W + (long long)min(row0 + dr, tg.rows - 1) * wrb;
    // issue queues the copies of k-step k0 into stage st.
    // compact: a Q4_K / Q5_K weight at 16-byte aligned rows copies only
    // what its k-step decodes, 16 bytes a copy: the super-block's header
    // (d, dmin, scales; Q5_K's 32 bytes of high bits too) and the 64 bytes
    // of low bits of the step's half (CH chunks; the row's copy CH·16
    // bytes apart), not the whole super-block four bytes a copy.
    constexpr bool CPT = T == Q4_K || T == Q5_K;
    constexpr int HC = T == Q5_K ? 3 : 1, CH = HC + 4, QSO = 16 * HC;
    const bool compact = CPT && (((uintptr_t)tg.W | (uintptr_t)wrb) & 15) == 0;
    static_assert(!CPT || CH * 16 <= RW * 4, "a compact row outgrows its raw row");
    static_assert(ORAW % 16 == 0 && M::RAW % 16 == 0, "the raw stages are 16-byte aligned");
    auto issue = [&](int k0, int st) {
        int b0 = (k0 / KC) * KC / EPB; // first raw block of the step (K: the super-block)
        if (CPT && compact) {
            const uint8_t* sb = wrow + (long long)b0 * WB;
            int h = (k0 / KC) & 1;
            uint8_t* dst = mmq_smem + ORAW + st * M::RAW + dr * CH * 16;
            if (rowOK)
                for (int c = tid % TPR; c < CH; c += TPR) cp_async16z(dst + 16 * c, sb + (c < HC ? 16 * c : QSO + 64 * h + 16 * (c - HC)), true);
        } else {
            int nb = min(BPS, nblk - b0);
            const uint8_t* src = wrow + (long long)b0 * WB;
            const uint8_t* a0 = (const uint8_t*)((uintptr_t)src & ~(uintptr_t)3);
            int bytes = rowOK ? (int)(src - a0) + nb * WB : 0, words = (bytes + 3) / 4;
            uint32_t* dst = (uint32_t*)(mmq_smem + ORAW + st * M::RAW) + dr * RW;
#pragma unroll 4
            for (int w = tid % TPR; w < words; w += TPR) cp_async4n(dst + w, a0 + 4 * w, min(4, bytes - 4 * w));
        }
        int8_t(*sx)[LD] = (int8_t(*)[LD])(mmq_smem + OX + st * M::X);
#pragma unroll
        for (int i = 0; i < BNT * KC / 16 / NT; i++) {
            int idx = tid + NT * i, tk = idx / (KC / 16), c = idx % (KC / 16), tt = tok0 + tk;
            cp_async16z(&sx[tk][16 * c], qx + (long long)min(tt, ntok - 1) * kp + k0 + 16 * c, tt < ntok);
        }
        // scales: 8 floats a token, two 16-byte copies (xm too for Q4_1).
        int tk = tid >> 1, h = tid & 1, tt = tok0 + tk;
        long long o = (long long)min(tt, ntok - 1) * ngk + k0 / 16 + 4 * h;
        cp_async16z(mmq_smem + OXS + st * M::XS + 4 * (tk * NG + 4 * h), xs + o, tt < ntok);
        if (XM) cp_async16z(mmq_smem + OXM + st * M::XS + 4 * (tk * NG + 4 * h), xm + o, tt < ntok);
    };

    // Two barriers a k-step: after the first (this step's copies landed,
    // and every thread done with the step before — its decode of the other
    // raw stage, its compute from the other activation stage and from the
    // one weight tile), the next step's copies go into the other stage and
    // this step is decoded into the weight tile; after the second, computed.
    issue(0, 0);
    cp_async_commit();
    int it = 0;
    for (int k0 = 0; k0 < n; k0 += KC, it++) {
        int st = it & 1;
        cp_async_wait0();
        __syncthreads();
        if (k0 + KC < n) issue(k0 + KC, st ^ 1);
        cp_async_commit();
        // The row's raw bytes in this stage: its blocks from b0 on.
        int b0 = (k0 / KC) * KC / EPB;
        int off = (int)((uintptr_t)(wrow + (long long)b0 * WB) & 3);
        const uint8_t* rowp = CPT && compact ? mmq_smem + ORAW + st * M::RAW + dr * CH * 16 : mmq_smem + ORAW + st * M::RAW + dr * RW * 4 + off;
        Tile s{(int8_t(*)[LD])(mmq_smem + OW), (float(*)[NGP])(mmq_smem + OWS), (float(*)[NGP])(mmq_smem + OWM), (float*)(mmq_smem + OD),
               (float*)(mmq_smem + ODM), (int8_t(*)[LD])(mmq_smem + OX + st * M::X), (const float*)(mmq_smem + OXS + st * M::XS),
               (const float*)(mmq_smem + OXM + st * M::XS), NG};
        decode_step<T, NGT>(s, rowp, b0 * EPB, rowOK, dr, tid % TPR, k0, n, CPT && compact ? 1 : 3);
        __syncthreads();
        compute_step<T>(s, acc, isum, (k0 / KC) & 1, wr, wt, g, t4);
    }
    store_tile(tg, acc, row0, tok0, wr, wt, g, t4, ntok);
}

#define MMQ(name, T) \
    extern "C" __global__ void __launch_bounds__(128) mmq_##name(const uint8_t* W0, const uint8_t* W1, const uint8_t* W2, float* out0, float* out1, \
                                                               float* out2, int rows0, int rows1, int rows2, int tiles0, int tiles01, \
                                                               const int8_t* qx, const float* xs, const float* xm, int n, int kp, long long wrb, int ntok) { PDL_ENTRY(); \
        mmq<T>(W0, W1, W2, out0, out1, out2, rows0, rows1, rows2, tiles0, tiles01, qx, xs, xm, n, kp, wrb, ntok); } \
    extern "C" __global__ void __launch_bounds__(128, 3) mmqp_##name(const uint8_t* W0, const uint8_t* W1, const uint8_t* W2, float* out0, float* out1, \
                                                                float* out2, int rows0, int rows1, int rows2, int tiles0, int tiles01, \
                                                                const int8_t* qx, const float* xs, const float* xm, int n, int kp, long long wrb, int ntok) { PDL_ENTRY(); \
        mmqp<T, 128>(W0, W1, W2, out0, out1, out2, rows0, rows1, rows2, tiles0, tiles01, qx, xs, xm, n, kp, wrb, ntok); } \
    extern "C" __global__ void __launch_bounds__(256, 2) mmqw_##name(const uint8_t* W0, const uint8_t* W1, const uint8_t* W2, float* out0, float* out1, \
                                                                float* out2, int rows0, int rows1, int rows2, int tiles0, int tiles01, \
                                                                const int8_t* qx, const float* xs, const float* xm, int n, int kp, long long wrb, int ntok) { PDL_ENTRY(); \
        mmqp<T, 256>(W0, W1, W2, out0, out1, out2, rows0, rows1, rows2, tiles0, tiles01, qx, xs, xm, n, kp, wrb, ntok); }
MMQ(q4_0, Q4_0) MMQ(q4_1, Q4_1) MMQ(q8_0, Q8_0)
MMQ(q3_k, Q3_K) MMQ(q4_k, Q4_K) MMQ(q5_k, Q5_K) MMQ(q6_k, Q6_K)
