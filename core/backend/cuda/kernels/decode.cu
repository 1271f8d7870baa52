// Decode-shaped kernels: mat-vecs laid out for bandwidth, attention split
// over the KV length, and the fused norm/quantize, swiglu/quantize, rope
// and store kernels of a decode step. Unlike ops.cu and quant.cu these do
// not follow the CPU's float order: the integer block sums are exact and
// the activations are quantized exactly as the CPU quantizes them, but the
// float sums run in a parallel order (the op tests bound the difference by
// NMSE against the CPU backend).
#include "common.cuh"

// f16a: a half at a 2-aligned address.
__device__ __forceinline__ float f16a(const uint8_t* p) { return __half2float(*(const __half*)p); }
__device__ __forceinline__ float f32a(const uint8_t* p) { return *(const float*)p; }

// ------------------------------------------------------------ mat-vecs
// out[t][row] = W[row] · X[t] for NT tokens: one warp per weight row, four
// rows per block of 128 threads. The lanes of a warp split each weight
// block's bytes into 4-byte words (consecutive lanes, consecutive words)
// so a warp's loads cover few cache lines; each lane keeps its own float
// sum per token, reduced by shuffles at the end. grid (ceil(rows/4),
// ceil(T/NT)); the arguments are the matvec_* kernels' of quant.cu.

#define MV_HEAD                                                                                   \
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;                                         \
    int row = blockIdx.x * 4 + warp;                                                              \
    if (row >= rows) return;                                                                      \
    const uint8_t* w = W + (long long)row * wrb;                                                  \
    const int nt = min(NT, ntok - t0);                                                            \
    float acc[NT];                                                                                \
    _Pragma("unroll") for (int i = 0; i < NT; i++) acc[i] = 0.f;

#define MV_TAIL                                                                                   \
    _Pragma("unroll") for (int i = 0; i < NT; i++) {                                              \
        if (i < nt) {                                                                             \
            float r = warp_sum(acc[i]);                                                           \
            if (lane == 0) out[(long long)(t0 + i) * rows + row] = r;                             \
        }                                                                                         \
    }

// Q4_0 × q8_0: four lanes per block (word p of the nibbles: elements
// 4p..4p+3 and 16+4p..16+4p+3), eight blocks per warp step.
template <int NT>
__device__ __forceinline__ void mv_q4_0(const uint8_t* __restrict__ W, const uint8_t* __restrict__ X, float* __restrict__ out, int rows, int nblk,
                                        long long wrb, long long xrb, int ntok, int t0) {
    MV_HEAD
    const int g = lane >> 2, p = lane & 3;
#pragma unroll 4
    for (int b = g; b < nblk; b += 8) {
        const uint8_t* wb = w + (long long)b * 18;
        const int q = ld32h(wb + 2 + 4 * p);
        const float dw = f16a(wb);
        const int qlo = q & 0x0f0f0f0f, qhi = (q >> 4) & 0x0f0f0f0f;
#pragma unroll
        for (int i = 0; i < NT; i++) {
            if (i < nt) {
                const uint8_t* xb = X + (long long)(t0 + i) * xrb + (long long)b * 34;
                const int x0 = ld32h(xb + 2 + 4 * p), x1 = ld32h(xb + 18 + 4 * p);
                const int s = __dp4a(qlo, x0, __dp4a(qhi, x1, 0)) - 8 * __dp4a(0x01010101, x0, __dp4a(0x01010101, x1, 0));
                acc[i] = fma32((float)s, __fmul_rn(dw, f16a(xb)), acc[i]);
            }
        }
    }
    MV_TAIL
}

// Q8_0 × q8_0: eight lanes per block (one word each), four blocks per step.
template <int NT>
__device__ __forceinline__ void mv_q8_0(const uint8_t* __restrict__ W, const uint8_t* __restrict__ X, float* __restrict__ out, int rows, int nblk,
                                        long long wrb, long long xrb, int ntok, int t0) {
    MV_HEAD
    const int g = lane >> 3, p = lane & 7;
#pragma unroll 4
    for (int b = g; b < nblk; b += 4) {
        const uint8_t* wb = w + (long long)b * 34;
        const int q = ld32h(wb + 2 + 4 * p);
        const float dw = f16a(wb);
#pragma unroll
        for (int i = 0; i < NT; i++) {
            if (i < nt) {
                const uint8_t* xb = X + (long long)(t0 + i) * xrb + (long long)b * 34;
                const int s = __dp4a(q, ld32h(xb + 2 + 4 * p), 0);
                acc[i] = fma32((float)s, __fmul_rn(dw, f16a(xb)), acc[i]);
            }
        }
    }
    MV_TAIL
}

// Q4_K × q8_K: a warp per block, lane l one word of the 128 nibble bytes
// (sub-blocks 2j and 2j+1, j = l/8); the mins are taken against the lane's
// own activation sums (the same integers as the block's bsums).
template <int NT>
__device__ __forceinline__ void mv_q4_k(const uint8_t* __restrict__ W, const uint8_t* __restrict__ X, float* __restrict__ out, int rows, int nblk,
                                        long long wrb, long long xrb, int ntok, int t0) {
    MV_HEAD
    const int j = lane >> 3, r = (lane & 7) * 4;
#pragma unroll 4
    for (int b = 0; b < nblk; b++) {
        const uint8_t* wb = w + (long long)b * 144;
        const int qq = ld32a(wb + 16 + 32 * j + r);
        const float d = f16a(wb), dmin = f16a(wb + 2);
        int sc0, m0, sc1, m1;
        scale_min_k4(2 * j, wb + 4, &sc0, &m0);
        scale_min_k4(2 * j + 1, wb + 4, &sc1, &m1);
        const int qlo = qq & 0x0f0f0f0f, qhi = (qq >> 4) & 0x0f0f0f0f;
#pragma unroll
        for (int i = 0; i < NT; i++) {
            if (i < nt) {
                const uint8_t* xb = X + (long long)(t0 + i) * xrb + (long long)b * 292;
                const int x0 = ld32a(xb + 4 + 64 * j + r), x1 = ld32a(xb + 36 + 64 * j + r);
                const int is = sc0 * __dp4a(qlo, x0, 0) + sc1 * __dp4a(qhi, x1, 0);
                const int im = m0 * __dp4a(0x01010101, x0, 0) + m1 * __dp4a(0x01010101, x1, 0);
                const float dx = f32a(xb);
                acc[i] = fma32(__fmul_rn(dx, d), (float)is, fma32(-__fmul_rn(dx, dmin), (float)im, acc[i]));
            }
        }
    }
    MV_TAIL
}

// Q6_K × q8_K: a warp per block. Lane l takes half h = (l/8)&1, four
// positions l4 = 4(l%8) of that half's 32, and quarters s and s+2
// (s = l/16): one word of ql, one of qh, 8 elements.
template <int NT>
__device__ __forceinline__ void mv_q6_k(const uint8_t* __restrict__ W, const uint8_t* __restrict__ X, float* __restrict__ out, int rows, int nblk,
                                        long long wrb, long long xrb, int ntok, int t0) {
    MV_HEAD
    const int s = lane >> 4, h = (lane >> 3) & 1, l4 = (lane & 7) * 4, is = l4 >> 4;
#pragma unroll 4
    for (int b = 0; b < nblk; b++) {
        const uint8_t* wb = w + (long long)b * 210;
        const int a = ld32h(wb + 64 * h + 32 * s + l4), hh = ld32h(wb + 128 + 32 * h + l4);
        const int qlo = (a & 0x0f0f0f0f) | (((hh >> (2 * s)) & 0x03030303) << 4);
        const int qhi = ((a >> 4) & 0x0f0f0f0f) | (((hh >> (2 * s + 4)) & 0x03030303) << 4);
        const int slo = (int8_t)wb[192 + 8 * h + is + 2 * s], shi = (int8_t)wb[192 + 8 * h + is + 2 * (s + 2)];
        const float d = f16a(wb + 208);
#pragma unroll
        for (int i = 0; i < NT; i++) {
            if (i < nt) {
                const uint8_t* xb = X + (long long)(t0 + i) * xrb + (long long)b * 292;
                const int xa = ld32a(xb + 4 + 128 * h + 32 * s + l4), xc = ld32a(xb + 4 + 128 * h + 32 * (s + 2) + l4);
                const int v = slo * (__dp4a(qlo, xa, 0) - 32 * __dp4a(0x01010101, xa, 0)) + shi * (__dp4a(qhi, xc, 0) - 32 * __dp4a(0x01010101, xc, 0));
                acc[i] = fma32(__fmul_rn(d, f32a(xb)), (float)v, acc[i]);
            }
        }
    }
    MV_TAIL
}

#define MVF(name)                                                                                                                                   \
    extern "C" __global__ void __launch_bounds__(128) mvf_##name##_1(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk, long long wrb, \
                                                                     long long xrb, int ntok) {                                                    \
        mv_##name<1>(W, X, out, rows, nblk, wrb, xrb, ntok, blockIdx.y);                                                                           \
    }                                                                                                                                               \
    extern "C" __global__ void __launch_bounds__(128) mvf_##name##_b(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk, long long wrb, \
                                                                     long long xrb, int ntok) {                                                    \
        mv_##name<8>(W, X, out, rows, nblk, wrb, xrb, ntok, blockIdx.y * 8);                                                                       \
    }
MVF(q4_0) MVF(q8_0) MVF(q4_k) MVF(q6_k)

// ------------------------------------------------- activation quantizers
// The quantizers of quant.cu on values already in registers: a warp holds
// one 32-element q8_0/q8_1 block, a block of 256 threads one q8_K block.

__device__ __forceinline__ int sat8d(float v) {
    int q = __float2int_rn(v);
    return q > 127 ? 127 : (q < -128 ? -128 : q);
}
__device__ __forceinline__ void q8_0_warp(float v, uint8_t* b, int lane) {
    float amax = warp_max(fabsf(v));
    float id = amax != 0.f ? 127.f / amax : 0.f;
    b[2 + lane] = (uint8_t)(int8_t)sat8d(v * id);
    if (lane == 0) put_f16(b, amax / 127.f);
}
__device__ __forceinline__ void q8_1_warp(float v, uint8_t* b, int lane) {
    float amax = warp_max(fabsf(v));
    float d = amax / 127.f;
    float id = amax != 0.f ? 127.f / amax : 0.f;
    int q = sat8d(v * id);
    b[4 + lane] = (uint8_t)(int8_t)q;
    int sum = warp_sum_i(q);
    if (lane == 0) {
        put_f16(b, d);
        put_f16(b + 2, d * (float)sum);
    }
}
// q8k_sh: the shared scratch of q8k_block.
struct q8k_sh {
    float v[256];
    float a[8];
    int i[8];
    int bs[16];
};
// q8k_block: quantize_row_q8_K_ref over the 256 values of the block's
// threads (all 256 call it). The extreme is the first element of largest
// magnitude.
__device__ void q8k_block(float v, uint8_t* b, q8k_sh* sh) {
    int t = threadIdx.x, lane = t & 31, w = t >> 5;
    sh->v[t] = v;
    float a = fabsf(v);
    int idx = t;
    for (int o = 16; o > 0; o >>= 1) {
        float a2 = __shfl_xor_sync(0xffffffffu, a, o);
        int i2 = __shfl_xor_sync(0xffffffffu, idx, o);
        if (a2 > a || (a2 == a && i2 < idx)) {
            a = a2;
            idx = i2;
        }
    }
    if (lane == 0) {
        sh->a[w] = a;
        sh->i[w] = idx;
    }
    __syncthreads();
    float amax = sh->a[0];
    int bi = sh->i[0];
    for (int k = 1; k < 8; k++)
        if (sh->a[k] > amax || (sh->a[k] == amax && sh->i[k] < bi)) {
            amax = sh->a[k];
            bi = sh->i[k];
        }
    int q = 0;
    float iscale = 0.f;
    if (amax != 0.f) {
        iscale = -127.f / sh->v[bi];
        q = __float2int_rn(iscale * v);
        if (q > 127) q = 127;
    }
    b[4 + t] = (uint8_t)(int8_t)q;
    int s = q;
    for (int o = 8; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((t & 15) == 0) sh->bs[t >> 4] = s;
    __syncthreads();
    if (t < 16) {
        int16_t bs = (int16_t)sh->bs[t];
        b[260 + 2 * t] = (uint16_t)bs & 0xff;
        b[261 + 2 * t] = (uint16_t)bs >> 8;
    }
    if (t == 0) {
        uint32_t d = amax != 0.f ? __float_as_uint(1.f / iscale) : 0u;
        b[0] = d & 0xff;
        b[1] = (d >> 8) & 0xff;
        b[2] = (d >> 16) & 0xff;
        b[3] = d >> 24;
    }
    __syncthreads(); // the scratch is reused by the caller's next block
}

enum { QT_NONE = 0, QT_Q8_0 = 1, QT_Q8_1 = 2, QT_Q8_K = 3 };

// quantize_at: value v of element i (the thread's; the callers step so a
// warp holds whole q8_0/q8_1 blocks and a 256-thread block whole q8_K
// blocks) into row r's activation blocks at q.
__device__ __forceinline__ void quantize_at(int qt, float v, uint8_t* q, long long xrb, long long r, int e, bool warpIn, q8k_sh* sh) {
    uint8_t* row = q + r * xrb;
    int lane = threadIdx.x & 31;
    if (qt == QT_Q8_0) {
        if (warpIn) q8_0_warp(v, row + (e / 32) * 34, lane);
    } else if (qt == QT_Q8_1) {
        if (warpIn) q8_1_warp(v, row + (e / 32) * 36, lane);
    } else if (qt == QT_Q8_K) {
        q8k_block(v, row + (e / 256) * 292, sh);
    }
}

// norm_quant: rms_norm of a row of x (or of x+y, the residual add, whose
// sum goes to sum), the norm to out, times w (wrows rows) to out2, and the
// result quantized (qt) into q for the mat-mul that reads it. One block of
// 256 threads per row; n a multiple of 32 (q8_0/q8_1) or 256 (q8_K).
// The sum of squares is accumulated in double and the scale computed as
// the CPU computes it.
extern "C" __global__ void __launch_bounds__(256) norm_quant(const float* x, const float* y, float* sum, float* out, const float* w, float* out2,
                                                             uint8_t* q, int n, int wrows, float eps, int qt, long long xrb) {
    __shared__ double part[8];
    __shared__ float sscale;
    __shared__ q8k_sh sh;
    long long r = blockIdx.x;
    const float* xr = x + r * n;
    const float* yr = y ? y + r * n : nullptr;
    float* sr = sum ? sum + r * n : nullptr;
    int tid = threadIdx.x;
    double s = 0;
    for (int i = tid; i < n; i += 256) {
        float v = xr[i];
        if (yr) {
            v = __fadd_rn(v, yr[i]);
            sr[i] = v;
        }
        s += (double)__fmul_rn(v, v);
    }
    s = warp_sum_d(s);
    if ((tid & 31) == 0) part[tid >> 5] = s;
    __syncthreads();
    if (tid == 0) {
        double t = 0;
        for (int k = 0; k < 8; k++) t += part[k];
        float mean = (float)(t / (double)n);
        sscale = 1.f / (float)sqrt((double)(mean + eps));
    }
    __syncthreads();
    const float scale = sscale;
    const float* src = sr ? sr : xr;
    const float* wr = w ? w + (long long)(r % wrows) * n : nullptr;
    for (int i0 = 0; i0 < n; i0 += 256) {
        int i = i0 + tid;
        bool warpIn = i0 + (tid & ~31) < n;
        float v = 0.f;
        if (i < n) {
            v = __fmul_rn(src[i], scale);
            out[r * n + i] = v;
            if (wr) {
                v = __fmul_rn(v, wr[i]);
                out2[r * n + i] = v;
            }
        }
        quantize_at(qt, v, q, xrb, r, i, warpIn, &sh);
    }
}

// swiglu_quant: swiglu of ops.cu (expf16 on each row's full 16-blocks, the
// C library's expf on the rest) and the product quantized (qt) into q.
// Rows of n (a multiple of 32, or of 256 for q8_K); 256 threads per block.
extern "C" __global__ void __launch_bounds__(256) swiglu_quant(const float* g, const float* u, float* out, uint8_t* q, int n, long long total, int qt,
                                                               long long xrb) {
    __shared__ q8k_sh sh;
    int full = n & ~15;
    int tid = threadIdx.x;
    for (long long base = blockIdx.x * 256LL; base < total; base += gridDim.x * 256LL) {
        long long i = base + tid;
        bool warpIn = base + (tid & ~31) < total;
        float v = 0.f;
        long long r = i / n;
        int e = (int)(i % n);
        if (i < total) {
            float x = g[i];
            float ex = e < full ? expf16(-x) : expf_libm(-x);
            v = __fmul_rn(__fdiv_rn(x, __fadd_rn(1.f, ex)), u[i]);
            out[i] = v;
        }
        quantize_at(qt, v, q, xrb, r, e, warpIn, &sh);
    }
}

// ---------------------------------------------------------------- rope
// rope_pair: the rope of ops.cu for one or two tensors of the same tokens
// (q and k: blockIdx.y picks), one block per token. The thetas follow the
// CPU's recurrence (theta *= theta_scale in float32, each pair's thread
// runs it), cos/sin in double rounded to float; every pair of every head
// is then rotated in parallel. headDim even.
extern "C" __global__ void rope_pair(const float* x, float* out, int heads, const float* x2, float* out2, int heads2, const int* pos,
                                     const float* freqs, int headDim, int dims, int neox, float freqScale, float thetaScale) {
    extern __shared__ float cs[]; // dims: cos, sin interleaved
    int t = blockIdx.x;
    const float* X = blockIdx.y ? x2 : x;
    float* O = blockIdx.y ? out2 : out;
    int H = blockIdx.y ? heads2 : heads;
    int half = dims / 2;
    for (int k = threadIdx.x; k < half; k += blockDim.x) {
        float theta = (float)pos[t];
        for (int m = 0; m < k; m++) theta *= thetaScale;
        float ff = freqs ? freqs[k] : 1.f;
        float th = freqScale * (theta / ff);
        cs[2 * k] = (float)cos((double)th);
        cs[2 * k + 1] = (float)sin((double)th);
    }
    __syncthreads();
    int hp = headDim / 2; // work items per head
    for (int e = threadIdx.x; e < H * hp; e += blockDim.x) {
        int h = e / hp, k = e % hp;
        long long off = ((long long)t * H + h) * headDim;
        const float* xr = X + off;
        float* o = O + off;
        if (k >= half) {
            int a = dims + 2 * (k - half);
            o[a] = xr[a];
            o[a + 1] = xr[a + 1];
            continue;
        }
        int a = neox ? k : 2 * k, b = neox ? k + half : 2 * k + 1;
        float c = cs[2 * k], s = cs[2 * k + 1];
        float x0 = xr[a], x1 = xr[b];
        o[a] = fma32(x0, c, -__fmul_rn(x1, s));
        o[b] = fma32(x0, s, __fmul_rn(x1, c));
    }
}

// store_kv_pair: two store_kv of the same rows (K and V) in one launch,
// blockIdx.y picking; caches of type F16 (f16 = 1) or F32. grid (T, 2).
extern "C" __global__ void store_kv_pair(void* c1, const float* x1, void* c2, const float* x2, const int* rows, int n, int ctx, int f16) {
    int r = rows[blockIdx.x];
    if (r < 0 || r >= ctx) return;
    void* c = blockIdx.y ? c2 : c1;
    const float* x = (blockIdx.y ? x2 : x1) + (long long)blockIdx.x * n;
    if (f16) {
        uint16_t* o = (uint16_t*)c + (long long)r * n;
        for (int i = threadIdx.x; i < n; i += blockDim.x) o[i] = to_f16(x[i]);
    } else {
        float* o = (float*)c + (long long)r * n;
        for (int i = threadIdx.x; i < n; i += blockDim.x) o[i] = x[i];
    }
}

// ----------------------------------------------------- decode attention
// One query token, split over the KV length (flash-decoding). Pass 1
// (attn_scores): grid (heads, splits) of 128 threads; each warp scores
// positions of its split (lane l holds E = headDim/32 consecutive elements
// of q and of each K row, the dot reduced by shuffles), soft-capped,
// scaled and masked, into S; the block's max and Σexp(s−max) to
// stats[h][split]. Pass 2 (attn_values): the same grid; each block merges
// every split's stats into the row's max M and sum L, weights its
// positions by exp(s−M)/L (rounded to F16 with an F16 cache, as the CPU
// rounds them) and sums the V rows into a partial; the last block of a
// head to finish (a counter) adds the partials in split order into out and
// resets the counter, quantizing the row (qt: q8_0 or q8_1) for the
// mat-mul after it. Masked positions (−Inf) are skipped.

template <int E, bool F16C>
__device__ __forceinline__ void load_row(const void* base, long long off, float* v) {
    if (F16C) {
        const __half* p = (const __half*)base + off;
        if (E == 2) {
            __half2 a = *(const __half2*)p;
            v[0] = __low2float(a);
            v[1] = __high2float(a);
        } else if (E == 4) {
            uint2 u = *(const uint2*)p;
            __half2 a = *(__half2*)&u.x, b = *(__half2*)&u.y;
            v[0] = __low2float(a);
            v[1] = __high2float(a);
            v[2] = __low2float(b);
            v[3] = __high2float(b);
        } else if (E == 8) {
            uint4 u = *(const uint4*)p;
            const __half2* hp = (const __half2*)&u;
#pragma unroll
            for (int k = 0; k < 4; k++) {
                v[2 * k] = __low2float(hp[k]);
                v[2 * k + 1] = __high2float(hp[k]);
            }
        } else {
#pragma unroll
            for (int k = 0; k < E; k++) v[k] = __half2float(p[k]);
        }
    } else {
        const float* p = (const float*)base + off;
#pragma unroll
        for (int k = 0; k < E; k++) v[k] = p[k];
    }
}

template <int E, bool F16C>
__device__ void attn_scores(const float* q, const void* kc, const float* mask, float* S, float2* stats, int heads, int kvHeads, int kvLen, int chunk,
                            float scale, float softCap) {
    __shared__ float2 ws[4];
    const int hd = 32 * E;
    int h = blockIdx.x, sp = blockIdx.y, nsp = gridDim.y, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int kvh = h / (heads / kvHeads);
    long long kvRow = (long long)hd * kvHeads;
    float qv[E];
#pragma unroll
    for (int k = 0; k < E; k++) {
        float v = q[(long long)h * hd + lane * E + k];
        qv[k] = F16C ? __half2float(__float2half_rn(v)) : v;
    }
    int j0 = sp * chunk, j1 = min(kvLen, j0 + chunk);
    float m = -INFINITY, l = 0.f;
    float* Sh = S + (long long)h * kvLen;
    for (int j = j0 + warp; j < j1; j += 4) {
        float mk = mask[j];
        if (isinf(mk) && mk < 0) {
            if (lane == 0) Sh[j] = -INFINITY;
            continue;
        }
        float kv[E];
        load_row<E, F16C>(kc, j * kvRow + (long long)kvh * hd + lane * E, kv);
        float d = 0.f;
#pragma unroll
        for (int k = 0; k < E; k++) d = fma32(qv[k], kv[k], d);
        d = warp_sum(d);
        if (softCap > 0.f) d = __fmul_rn(cpu_tanhf(__fmul_rn(d, __fdiv_rn(1.f, softCap))), softCap);
        float v = __fadd_rn(__fmul_rn(d, scale), mk);
        if (lane == 0) Sh[j] = v;
        float mn = fmaxf(m, v);
        l = __fadd_rn(__fmul_rn(l, expf(__fsub_rn(m, mn))), expf(__fsub_rn(v, mn)));
        m = mn;
    }
    if (lane == 0) ws[warp] = make_float2(m, l);
    __syncthreads();
    if (threadIdx.x == 0) {
        float M = fmaxf(fmaxf(ws[0].x, ws[1].x), fmaxf(ws[2].x, ws[3].x));
        float L = 0.f;
        if (M != -INFINITY)
            for (int k = 0; k < 4; k++)
                if (ws[k].x != -INFINITY) L = __fadd_rn(L, __fmul_rn(ws[k].y, expf(__fsub_rn(ws[k].x, M))));
        stats[(long long)h * nsp + sp] = make_float2(M, L);
    }
}

template <int E, bool F16C>
__device__ void attn_values(const float* S, const float2* stats, const void* vc, float* part, unsigned* counters, float* out, int heads, int kvHeads,
                            int kvLen, int chunk, uint8_t* q, int qt) {
    __shared__ float red[4][32 * E];
    __shared__ float sML[2];
    __shared__ bool last;
    const int hd = 32 * E;
    int h = blockIdx.x, sp = blockIdx.y, nsp = gridDim.y, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int kvh = h / (heads / kvHeads);
    long long kvRow = (long long)hd * kvHeads;
    if (threadIdx.x == 0) {
        const float2* st = stats + (long long)h * nsp;
        float M = -INFINITY;
        for (int k = 0; k < nsp; k++) M = fmaxf(M, st[k].x);
        float L = 0.f;
        for (int k = 0; k < nsp; k++)
            if (st[k].x != -INFINITY) L = __fadd_rn(L, __fmul_rn(st[k].y, expf(__fsub_rn(st[k].x, M))));
        sML[0] = M;
        sML[1] = 1.f / L;
    }
    __syncthreads();
    const float M = sML[0], invL = sML[1];
    float o[E];
#pragma unroll
    for (int k = 0; k < E; k++) o[k] = 0.f;
    const float* Sh = S + (long long)h * kvLen;
    int j0 = sp * chunk, j1 = min(kvLen, j0 + chunk);
    for (int j = j0 + warp; j < j1; j += 4) {
        float s = Sh[j];
        if (s == -INFINITY) continue;
        float wgt = __fmul_rn(expf(__fsub_rn(s, M)), invL);
        if (F16C) wgt = __half2float(__float2half_rn(wgt));
        float vv[E];
        load_row<E, F16C>(vc, j * kvRow + (long long)kvh * hd + lane * E, vv);
#pragma unroll
        for (int k = 0; k < E; k++) o[k] = fma32(wgt, vv[k], o[k]);
    }
#pragma unroll
    for (int k = 0; k < E; k++) red[warp][lane * E + k] = o[k];
    __syncthreads();
    float* P = part + ((long long)h * nsp + sp) * hd;
    for (int d = threadIdx.x; d < hd; d += blockDim.x) P[d] = __fadd_rn(__fadd_rn(red[0][d], red[1][d]), __fadd_rn(red[2][d], red[3][d]));
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned done = atomicAdd(&counters[h], 1u);
        last = done == (unsigned)nsp - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    const volatile float* Ph = part + (long long)h * nsp * hd;
    // hd is a multiple of 32: each warp's elements are one q8_0/q8_1 block.
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
        float a = 0.f;
        for (int k = 0; k < nsp; k++) a = __fadd_rn(a, Ph[(long long)k * hd + d]);
        long long e = (long long)h * hd + d;
        out[e] = a;
        if (qt == QT_Q8_0) q8_0_warp(a, q + (e / 32) * 34, lane);
        else if (qt == QT_Q8_1) q8_1_warp(a, q + (e / 32) * 36, lane);
    }
    if (threadIdx.x == 0) counters[h] = 0;
}

#define ATTN_DEC(E, ty, F16C)                                                                                                                         \
    extern "C" __global__ void __launch_bounds__(128) attn_scores_##ty##_##E(const float* q, const void* kc, const float* mask, float* S, float2* stats, \
                                                                             int heads, int kvHeads, int kvLen, int chunk, float scale, float softCap) {   \
        attn_scores<E, F16C>(q, kc, mask, S, stats, heads, kvHeads, kvLen, chunk, scale, softCap);                                                    \
    }                                                                                                                                                 \
    extern "C" __global__ void __launch_bounds__(128) attn_values_##ty##_##E(const float* S, const float2* stats, const void* vc, float* part,         \
                                                                             unsigned* counters, float* out, int heads, int kvHeads, int kvLen,        \
                                                                             int chunk, uint8_t* q, int qt) {                                         \
        attn_values<E, F16C>(S, stats, vc, part, counters, out, heads, kvHeads, kvLen, chunk, q, qt);                                                 \
    }
ATTN_DEC(2, f16, true) ATTN_DEC(3, f16, true) ATTN_DEC(4, f16, true) ATTN_DEC(8, f16, true)
ATTN_DEC(2, f32, false) ATTN_DEC(3, f32, false) ATTN_DEC(4, f32, false) ATTN_DEC(8, f32, false)
