// Weight formats on the device: get_rows (dequantize table rows), the
// activation quantizers the matmul pairs with each weight type (q8_0, q8_1,
// q8_K, f16, bf16: core/quant's QuantizeRow bit for bit), and the mat-vec
// kernels: exact integer block dot products, float32 scaling per block.
#include "common.cuh"

enum { F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, BF16 = 30 };

template <int T> struct fmt;
// BS elements per block, WB bytes per weight block, XB bytes per activation
// block, NSUB parts a warp lane takes one at a time.
template <> struct fmt<Q4_0> { enum { BS = 32, WB = 18, XB = 34, NSUB = 1 }; };
template <> struct fmt<Q4_1> { enum { BS = 32, WB = 20, XB = 36, NSUB = 1 }; };
template <> struct fmt<Q5_0> { enum { BS = 32, WB = 22, XB = 34, NSUB = 1 }; };
template <> struct fmt<Q5_1> { enum { BS = 32, WB = 24, XB = 36, NSUB = 1 }; };
template <> struct fmt<Q8_0> { enum { BS = 32, WB = 34, XB = 34, NSUB = 1 }; };
template <> struct fmt<Q2_K> { enum { BS = 256, WB = 84, XB = 292, NSUB = 4 }; };
template <> struct fmt<Q3_K> { enum { BS = 256, WB = 110, XB = 292, NSUB = 4 }; };
template <> struct fmt<Q4_K> { enum { BS = 256, WB = 144, XB = 292, NSUB = 4 }; };
template <> struct fmt<Q5_K> { enum { BS = 256, WB = 176, XB = 292, NSUB = 4 }; };
template <> struct fmt<Q6_K> { enum { BS = 256, WB = 210, XB = 292, NSUB = 4 }; };

// ---------------------------------------------------------------- dequant
// deq<T>(block, i): element i of one block, as core/quant's dequant.

template <int T> __device__ float deq(const uint8_t* b, int i);

template <> __device__ float deq<Q4_0>(const uint8_t* b, int i) {
    float d = f16(b);
    int q = i < 16 ? (b[2 + i] & 0xf) : (b[2 + i - 16] >> 4);
    return (float)(q - 8) * d;
}
template <> __device__ float deq<Q4_1>(const uint8_t* b, int i) {
    float d = f16(b), m = f16(b + 2);
    int q = i < 16 ? (b[4 + i] & 0xf) : (b[4 + i - 16] >> 4);
    return (float)q * d + m;
}
template <> __device__ float deq<Q5_0>(const uint8_t* b, int i) {
    float d = f16(b);
    uint32_t qh = u32le(b + 2);
    int j = i & 15;
    uint32_t v = b[6 + j];
    int q = i < 16 ? (int)((v & 0xf) | ((qh >> j << 4) & 0x10)) : (int)((v >> 4) | ((qh >> (j + 12)) & 0x10));
    return (float)(q - 16) * d;
}
template <> __device__ float deq<Q5_1>(const uint8_t* b, int i) {
    float d = f16(b), m = f16(b + 2);
    uint32_t qh = u32le(b + 4);
    int j = i & 15;
    uint32_t v = b[8 + j];
    int q = i < 16 ? (int)((v & 0xf) | ((qh >> j << 4) & 0x10)) : (int)((v >> 4) | ((qh >> (j + 12)) & 0x10));
    return (float)q * d + m;
}
template <> __device__ float deq<Q8_0>(const uint8_t* b, int i) { return (float)(int8_t)b[2 + i] * f16(b); }
template <> __device__ float deq<Q2_K>(const uint8_t* b, int e) {
    int half = e >> 7, r = e & 127, j = r >> 5, l = r & 31, sub = l >> 4;
    uint8_t sc = b[8 * half + 2 * j + sub];
    float d = f16(b + 80), dmin = f16(b + 82);
    float dl = d * (float)(sc & 0xf), ml = dmin * (float)(sc >> 4);
    int q = (b[16 + 32 * half + l] >> (2 * j)) & 3;
    return dl * (float)q - ml;
}
template <> __device__ float deq<Q3_K>(const uint8_t* b, int e) {
    int half = e >> 7, r = e & 127, j = r >> 5, l = r & 31, sub = l >> 4;
    float d = f16(b + 108);
    float dl = d * (float)scale_q3k(8 * half + 2 * j + sub, b + 96);
    int v = ((b[32 + 32 * half + l] >> (2 * j)) & 3) - 4 * (((b[l] >> (4 * half + j)) & 1) ^ 1);
    return dl * (float)v;
}
template <> __device__ float deq<Q4_K>(const uint8_t* b, int e) {
    int j = e >> 6, r = e & 63;
    float d = f16(b), dmin = f16(b + 2);
    int sc, m, q;
    if (r < 32) {
        scale_min_k4(2 * j, b + 4, &sc, &m);
        q = b[16 + 32 * j + r] & 0xf;
    } else {
        scale_min_k4(2 * j + 1, b + 4, &sc, &m);
        q = b[16 + 32 * j + r - 32] >> 4;
    }
    return (d * (float)sc) * (float)q - dmin * (float)m;
}
template <> __device__ float deq<Q5_K>(const uint8_t* b, int e) {
    int j = e >> 6, r = e & 63;
    float d = f16(b), dmin = f16(b + 2);
    int sc, m, q;
    if (r < 32) {
        scale_min_k4(2 * j, b + 4, &sc, &m);
        q = (b[48 + 32 * j + r] & 0xf) | (((b[16 + r] >> (2 * j)) & 1) << 4);
    } else {
        scale_min_k4(2 * j + 1, b + 4, &sc, &m);
        q = (b[48 + 32 * j + r - 32] >> 4) | (((b[16 + r - 32] >> (2 * j + 1)) & 1) << 4);
    }
    return (d * (float)sc) * (float)q - dmin * (float)m;
}
template <> __device__ float deq<Q6_K>(const uint8_t* b, int e) {
    int half = e >> 7, r = e & 127, quarter = r >> 5, l = r & 31, is = l >> 4;
    const uint8_t* ql = b + 64 * half;
    uint8_t h = b[128 + 32 * half + l];
    const uint8_t* sc = b + 192 + 8 * half;
    float d = f16(b + 208);
    int q;
    switch (quarter) {
    case 0: q = (ql[l] & 0xf) | ((h & 3) << 4); break;
    case 1: q = (ql[l + 32] & 0xf) | (((h >> 2) & 3) << 4); break;
    case 2: q = (ql[l] >> 4) | (((h >> 4) & 3) << 4); break;
    default: q = (ql[l + 32] >> 4) | ((h >> 6) << 4); break;
    }
    return (d * (float)(int8_t)sc[is + 2 * quarter]) * (float)(q - 32);
}

template <int T> __device__ void get_rows_blocks(const uint8_t* table, const int* ids, float* out, int n, long long rb, int nrows) {
    int id = ids[blockIdx.x];
    float* o = out + (long long)blockIdx.x * n;
    if (id < 0 || id >= nrows) {
        for (int e = threadIdx.x; e < n; e += blockDim.x) o[e] = __int_as_float(0x7fc00000);
        return;
    }
    const uint8_t* row = table + (long long)id * rb;
#pragma unroll 4
    for (int e = threadIdx.x; e < n; e += blockDim.x) o[e] = deq<T>(row + (e / fmt<T>::BS) * fmt<T>::WB, e % fmt<T>::BS);
}

#define GET_ROWS(name, T) \
    extern "C" __global__ void __launch_bounds__(1024) get_rows_##name(const uint8_t* table, const int* ids, float* out, int n, long long rb, int nrows) { PDL_ENTRY(); \
        get_rows_blocks<T>(table, ids, out, n, rb, nrows); }
GET_ROWS(q4_0, Q4_0) GET_ROWS(q4_1, Q4_1) GET_ROWS(q5_0, Q5_0) GET_ROWS(q5_1, Q5_1) GET_ROWS(q8_0, Q8_0)
GET_ROWS(q2_k, Q2_K) GET_ROWS(q3_k, Q3_K) GET_ROWS(q4_k, Q4_K) GET_ROWS(q5_k, Q5_K) GET_ROWS(q6_k, Q6_K)

extern "C" __global__ void __launch_bounds__(1024) get_rows_f32(const uint8_t* table, const int* ids, float* out, int n, long long rb, int nrows) { PDL_ENTRY();
    int id = ids[blockIdx.x];
    float* o = out + (long long)blockIdx.x * n;
    const float* row = (const float*)(table + (long long)id * rb);
    for (int e = threadIdx.x; e < n; e += blockDim.x) o[e] = (id < 0 || id >= nrows) ? __int_as_float(0x7fc00000) : row[e];
}
extern "C" __global__ void __launch_bounds__(1024) get_rows_f16(const uint8_t* table, const int* ids, float* out, int n, long long rb, int nrows) { PDL_ENTRY();
    int id = ids[blockIdx.x];
    float* o = out + (long long)blockIdx.x * n;
    const __half* row = (const __half*)(table + (long long)id * rb);
    for (int e = threadIdx.x; e < n; e += blockDim.x) o[e] = (id < 0 || id >= nrows) ? __int_as_float(0x7fc00000) : __half2float(row[e]);
}
extern "C" __global__ void __launch_bounds__(1024) get_rows_bf16(const uint8_t* table, const int* ids, float* out, int n, long long rb, int nrows) { PDL_ENTRY();
    int id = ids[blockIdx.x];
    float* o = out + (long long)blockIdx.x * n;
    const uint16_t* row = (const uint16_t*)(table + (long long)id * rb);
    for (int e = threadIdx.x; e < n; e += blockDim.x) o[e] = (id < 0 || id >= nrows) ? __int_as_float(0x7fc00000) : bf16bits(row[e]);
}

// ------------------------------------------------------------ quantizers
// One warp per 32-element block: q8_0 and q8_1 (ggml's AVX2 rounding: ties
// to even, saturating). grid (blocks per row, rows).

extern "C" __global__ void quant_q8_0(const float* x, uint8_t* y, int n, long long yrb) { PDL_ENTRY();
    int lane = threadIdx.x;
    float v = x[(long long)blockIdx.y * n + blockIdx.x * 32 + lane];
    float amax = warp_max(fabsf(v));
    uint8_t* b = y + (long long)blockIdx.y * yrb + blockIdx.x * 34;
    float id = amax != 0.f ? 127.f / amax : 0.f;
    int q = sat8(v * id);
    b[2 + lane] = (uint8_t)(int8_t)q;
    if (lane == 0) put_f16(b, amax / 127.f);
}

extern "C" __global__ void quant_q8_1(const float* x, uint8_t* y, int n, long long yrb) { PDL_ENTRY();
    int lane = threadIdx.x;
    float v = x[(long long)blockIdx.y * n + blockIdx.x * 32 + lane];
    float amax = warp_max(fabsf(v));
    uint8_t* b = y + (long long)blockIdx.y * yrb + blockIdx.x * 36;
    float d = amax / 127.f;
    float id = amax != 0.f ? 127.f / amax : 0.f;
    int q = sat8(v * id);
    b[4 + lane] = (uint8_t)(int8_t)q;
    int sum = warp_sum_i(q);
    if (lane == 0) {
        put_f16(b, d);
        put_f16(b + 2, d * (float)sum);
    }
}

// q8_K (quantize_row_q8_K_ref): 256 threads per 256-element block. The
// extreme is the first element of largest magnitude.
extern "C" __global__ void quant_q8_k(const float* x, uint8_t* y, int n, long long yrb) { PDL_ENTRY();
    __shared__ float sa[8];
    __shared__ int si[8];
    __shared__ int sb[16];
    int t = threadIdx.x, lane = t & 31, w = t >> 5;
    const float* xb = x + (long long)blockIdx.y * n + blockIdx.x * 256;
    uint8_t* b = y + (long long)blockIdx.y * yrb + blockIdx.x * 292;
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
    if (t == 0) {
        float ba = sa[0];
        int bi = si[0];
        for (int k = 1; k < 8; k++)
            if (sa[k] > ba || (sa[k] == ba && si[k] < bi)) { ba = sa[k]; bi = si[k]; }
        sa[0] = ba;
        si[0] = bi;
    }
    __syncthreads();
    float amax = sa[0];
    if (amax == 0.f) {
        b[4 + t] = 0;
        if (t < 4) b[t] = 0;
        if (t < 32) b[260 + t] = 0;
        return;
    }
    float extreme = xb[si[0]];
    float iscale = -127.f / extreme;
    int q = __float2int_rn(iscale * v);
    if (q > 127) q = 127;
    b[4 + t] = (uint8_t)(int8_t)q;
    // bsums: 16 consecutive quants each (half a warp).
    int s = q;
    for (int o = 8; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((t & 15) == 0) sb[t >> 4] = s;
    __syncthreads();
    if (t < 16) {
        int16_t bs = (int16_t)sb[t];
        b[260 + 2 * t] = (uint16_t)bs & 0xff;
        b[261 + 2 * t] = (uint16_t)bs >> 8;
    }
    if (t == 0) {
        uint32_t d = __float_as_uint(1.f / iscale);
        b[0] = d & 0xff;
        b[1] = (d >> 8) & 0xff;
        b[2] = (d >> 16) & 0xff;
        b[3] = d >> 24;
    }
}

extern "C" __global__ void quant_f16(const float* x, uint16_t* y, long long total) { PDL_ENTRY();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) y[i] = to_f16(x[i]);
}
extern "C" __global__ void quant_bf16(const float* x, uint16_t* y, long long total) { PDL_ENTRY();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) y[i] = to_bf16(x[i]);
}

// ----------------------------------------------------------- block dots
// The mat-vec kernels reproduce core/quant's vec-dot bit for bit. The
// integer part of each block is exact, so lanes compute it in any order
// (NL lanes per block, reduced with shuffles); the float part is then run
// as the CPU runs it: the per-block values v[] of each block are put in
// shared memory and one lane (or eight, one per AVX2 lane of the lanes8
// kernels) runs the float chain over the blocks in order.
//
// Per type: NL lanes per block; NI integers per block; ints<T>(w, x, p, s)
// adds part p's integers into s; vals<T>(w, x, s, v) makes the NV float
// inputs of the chain; NCH chains (1, or 8 for lanes8, +1 for Q5_1's summs).

template <int T> struct dotc;
template <> struct dotc<Q4_0> { enum { NL = 1, NI = 1, NV = 1, NCH = 1 }; };
template <> struct dotc<Q4_1> { enum { NL = 1, NI = 1, NV = 4, NCH = 1 }; };
template <> struct dotc<Q5_0> { enum { NL = 1, NI = 8, NV = 9, NCH = 8 }; };
template <> struct dotc<Q5_1> { enum { NL = 1, NI = 8, NV = 11, NCH = 9 }; };
template <> struct dotc<Q8_0> { enum { NL = 1, NI = 1, NV = 2, NCH = 1 }; };
template <> struct dotc<Q2_K> { enum { NL = 4, NI = 16, NV = 18, NCH = 8 }; };
template <> struct dotc<Q3_K> { enum { NL = 4, NI = 1, NV = 1, NCH = 1 }; };
template <> struct dotc<Q4_K> { enum { NL = 4, NI = 2, NV = 1, NCH = 1 }; };
template <> struct dotc<Q5_K> { enum { NL = 4, NI = 2, NV = 4, NCH = 1 }; };
template <> struct dotc<Q6_K> { enum { NL = 4, NI = 1, NV = 1, NCH = 1 }; };

__device__ __forceinline__ int bsum(const uint8_t* x, int j) { return i16le(x + 260 + 2 * j); }

template <int T> __device__ void ints(const uint8_t* w, const uint8_t* x, int p, int* s);
template <int T> __device__ void vals(const uint8_t* w, const uint8_t* x, const int* s, float* v);

// Q4_0: sum += float(sumi)·(d_w·d_x).
template <> __device__ void ints<Q4_0>(const uint8_t* w, const uint8_t* x, int, int* s) {
    // Σ(nibble−8)·q8 = Σ nibble·q8 − 8·Σq8, four products per dp4a.
    int acc = 0, sx = 0;
#pragma unroll
    for (int j = 0; j < 16; j += 4) {
        int q = ld32h(w + 2 + j);
        int x0 = ld32h(x + 2 + j), x1 = ld32h(x + 18 + j);
        acc = __dp4a(q & 0x0f0f0f0f, x0, acc);
        acc = __dp4a((q >> 4) & 0x0f0f0f0f, x1, acc);
        sx = __dp4a(0x01010101, x0, __dp4a(0x01010101, x1, sx));
    }
    s[0] += acc - 8 * sx;
}
template <> __device__ void vals<Q4_0>(const uint8_t* w, const uint8_t* x, const int* s, float* v) {
    v[0] = __fmul_rn((float)s[0], __fmul_rn(f16(w), f16(x)));
}
// Q4_1: acc = fma(d_w·d_x, sumi, acc); acc = fma(m_w, s_x, acc).
template <> __device__ void ints<Q4_1>(const uint8_t* w, const uint8_t* x, int, int* s) {
    int acc = 0;
#pragma unroll
    for (int j = 0; j < 16; j += 4) {
        int q = ld32a(w + 4 + j);
        acc = __dp4a(q & 0x0f0f0f0f, ld32a(x + 4 + j), acc);
        acc = __dp4a((q >> 4) & 0x0f0f0f0f, ld32a(x + 20 + j), acc);
    }
    s[0] += acc;
}
template <> __device__ void vals<Q4_1>(const uint8_t* w, const uint8_t* x, const int* s, float* v) {
    v[0] = __fmul_rn(f16(w), f16(x));
    v[1] = (float)s[0];
    v[2] = f16(w + 2);
    v[3] = f16(x + 2);
}
// Q5_0 / Q5_1: lanes8, lane l the sum of elements 4l..4l+3. The fifth
// bits of four consecutive elements are spread to bit 4 of their bytes.
__device__ __forceinline__ int spread4(uint32_t h) {
    return (int)(((h & 1u) | ((h & 2u) << 7) | ((h & 4u) << 14) | ((h & 8u) << 21)) << 4);
}
template <int OFF, int BIAS, bool AL>
__device__ __forceinline__ void ints_q5(const uint8_t* w, const uint8_t* x, int qhoff, int* s) {
    uint32_t qh = AL ? (uint32_t)ld32a(w + qhoff) : (uint32_t)ld32h(w + qhoff);
    const uint8_t* qw = w + qhoff + 4;
#pragma unroll
    for (int j = 0; j < 16; j += 4) {
        int q = AL ? ld32a(qw + j) : ld32h(qw + j);
        int x0 = AL ? ld32a(x + OFF + j) : ld32h(x + OFF + j);
        int x1 = AL ? ld32a(x + OFF + 16 + j) : ld32h(x + OFF + 16 + j);
        int v0 = (q & 0x0f0f0f0f) | spread4((qh >> j) & 0xf);
        int v1 = ((q >> 4) & 0x0f0f0f0f) | spread4((qh >> (j + 16)) & 0xf);
        s[j >> 2] += __dp4a(v0, x0, 0) - BIAS * __dp4a(0x01010101, x0, 0);
        s[(j + 16) >> 2] += __dp4a(v1, x1, 0) - BIAS * __dp4a(0x01010101, x1, 0);
    }
}
template <> __device__ void ints<Q5_0>(const uint8_t* w, const uint8_t* x, int, int* s) { ints_q5<2, 16, false>(w, x, 2, s); }
template <> __device__ void vals<Q5_0>(const uint8_t* w, const uint8_t* x, const int* s, float* v) {
    v[0] = __fmul_rn(f16(w), f16(x));
#pragma unroll
    for (int l = 0; l < 8; l++) v[1 + l] = (float)s[l];
}
template <> __device__ void ints<Q5_1>(const uint8_t* w, const uint8_t* x, int, int* s) { ints_q5<4, 0, true>(w, x, 4, s); }
template <> __device__ void vals<Q5_1>(const uint8_t* w, const uint8_t* x, const int* s, float* v) {
    v[0] = __fmul_rn(f16(w), f16(x));
#pragma unroll
    for (int l = 0; l < 8; l++) v[1 + l] = (float)s[l];
    v[9] = f16(w + 2);
    v[10] = f16(x + 2);
}
// Q8_0: sum = fma(float(sumi), d_w·d_x, sum).
template <> __device__ void ints<Q8_0>(const uint8_t* w, const uint8_t* x, int, int* s) {
    int acc = 0;
#pragma unroll
    for (int j = 0; j < 32; j += 4) acc = __dp4a(ld32h(w + 2 + j), ld32h(x + 2 + j), acc);
    s[0] += acc;
}
template <> __device__ void vals<Q8_0>(const uint8_t* w, const uint8_t* x, const int* s, float* v) {
    v[0] = (float)s[0];
    v[1] = __fmul_rn(f16(w), f16(x));
}
// Q2_K: s[0..7] = sumi per AVX2 lane, s[8..15] the lanes' min products;
// acc[l] = fma(dmin, prod_l, acc[l]) then fma(d, sumi_l, acc[l]).
template <> __device__ void ints<Q2_K>(const uint8_t* w, const uint8_t* x, int p, int* s) {
    const uint8_t* q8 = x + 4;
    const uint8_t* scales = w;
    int half = p >> 1;
    const uint8_t* q = w + 16 + 32 * half;
#pragma unroll
    for (int kk = 0; kk < 2; kk++) {
        int k = 2 * (p & 1) + kk;
        int shift = 2 * k;
        const uint8_t* y = q8 + 128 * half + 32 * k;
#pragma unroll
        for (int l = 0; l < 8; l++) {
            int sc = scales[8 * half + 2 * k + l / 4] & 0xf;
            s[l] += sc * __dp4a((ld32a(q + 4 * l) >> shift) & 0x03030303, ld32a(y + 4 * l), 0);
        }
    }
    if (p == 0) {
#pragma unroll
        for (int l = 0; l < 8; l++) s[8 + l] = (scales[2 * l] >> 4) * bsum(x, 2 * l) + (scales[2 * l + 1] >> 4) * bsum(x, 2 * l + 1);
    }
}
template <> __device__ void vals<Q2_K>(const uint8_t* w, const uint8_t* x, const int* s, float* v) {
    float dx = f32le(x);
    v[0] = __fmul_rn(-dx, f16(w + 82));
    v[1] = __fmul_rn(dx, f16(w + 80));
#pragma unroll
    for (int l = 0; l < 8; l++) {
        v[2 + l] = (float)s[8 + l];
        v[10 + l] = (float)s[l];
    }
}
// Q3_K: sum += (d·d_x)·float(isum).
template <> __device__ void ints<Q3_K>(const uint8_t* w, const uint8_t* x, int p, int* s) {
    const int8_t* q8 = (const int8_t*)(x + 4);
    const uint8_t* hmask = w;
    const uint8_t* scales = w + 96;
    int half = p >> 1;
    const uint8_t* q = w + 32 + 32 * half;
#pragma unroll
    for (int jj = 0; jj < 2; jj++) {
        int j = 2 * (p & 1) + jj;
        int shift = 2 * j, bit = 4 * half + j;
        const int8_t* y = q8 + 128 * half + 32 * j;
        int s0 = 0, s1 = 0;
#pragma unroll
        for (int l = 0; l < 16; l++) {
            int v0 = ((q[l] >> shift) & 3) - 4 * (((hmask[l] >> bit) & 1) ^ 1);
            int v1 = ((q[l + 16] >> shift) & 3) - 4 * (((hmask[l + 16] >> bit) & 1) ^ 1);
            s0 += v0 * y[l];
            s1 += v1 * y[l + 16];
        }
        int is = 8 * half + 2 * j;
        s[0] += scale_q3k(is, scales) * s0 + scale_q3k(is + 1, scales) * s1;
    }
}
template <> __device__ void vals<Q3_K>(const uint8_t* w, const uint8_t* x, const int* s, float* v) {
    v[0] = __fmul_rn(__fmul_rn(f16(w + 108), f32le(x)), (float)s[0]);
}
// Q4_K: sum += d·float(isum) − dmin·float(summs).
template <> __device__ void ints<Q4_K>(const uint8_t* w, const uint8_t* x, int j, int* s) {
    const uint8_t* y = x + 4 + 64 * j;
    const uint8_t* q = w + 16 + 32 * j;
    int sc0, m0, sc1, m1;
    scale_min_k4(2 * j, w + 4, &sc0, &m0);
    scale_min_k4(2 * j + 1, w + 4, &sc1, &m1);
    s[1] += m0 * (bsum(x, 4 * j) + bsum(x, 4 * j + 1)) + m1 * (bsum(x, 4 * j + 2) + bsum(x, 4 * j + 3));
    int s0 = 0, s1 = 0;
#pragma unroll
    for (int l = 0; l < 32; l += 4) {
        int qq = ld32a(q + l);
        s0 = __dp4a(qq & 0x0f0f0f0f, ld32a(y + l), s0);
        s1 = __dp4a((qq >> 4) & 0x0f0f0f0f, ld32a(y + l + 32), s1);
    }
    s[0] += sc0 * s0 + sc1 * s1;
}
template <> __device__ void vals<Q4_K>(const uint8_t* w, const uint8_t* x, const int* s, float* v) {
    float dx = f32le(x);
    float d = __fmul_rn(dx, f16(w)), dmin = __fmul_rn(dx, f16(w + 2));
    v[0] = __fsub_rn(__fmul_rn(d, (float)s[0]), __fmul_rn(dmin, (float)s[1]));
}
// Q5_K: acc = fma(float(isum), d·d_x, acc); acc = fma(−float(mins), dmin·d_x, acc).
template <> __device__ void ints<Q5_K>(const uint8_t* w, const uint8_t* x, int j, int* s) {
    const uint8_t* y = x + 4 + 64 * j;
    const uint8_t* q = w + 48 + 32 * j;
    const uint8_t* qh = w + 16;
    int sc0, m0, sc1, m1;
    scale_min_k4(2 * j, w + 4, &sc0, &m0);
    scale_min_k4(2 * j + 1, w + 4, &sc1, &m1);
    s[1] += m0 * (bsum(x, 4 * j) + bsum(x, 4 * j + 1)) + m1 * (bsum(x, 4 * j + 2) + bsum(x, 4 * j + 3));
    int s0 = 0, s1 = 0;
    int b0 = 2 * j, b1 = 2 * j + 1;
#pragma unroll
    for (int l = 0; l < 32; l += 4) {
        int qq = ld32a(q + l), hh = ld32a(qh + l);
        int v0 = (qq & 0x0f0f0f0f) | (((hh >> b0) & 0x01010101) << 4);
        int v1 = ((qq >> 4) & 0x0f0f0f0f) | (((hh >> b1) & 0x01010101) << 4);
        s0 = __dp4a(v0, ld32a(y + l), s0);
        s1 = __dp4a(v1, ld32a(y + l + 32), s1);
    }
    s[0] += sc0 * s0 + sc1 * s1;
}
template <> __device__ void vals<Q5_K>(const uint8_t* w, const uint8_t* x, const int* s, float* v) {
    float dx = f32le(x);
    v[0] = (float)s[0];
    v[1] = __fmul_rn(f16(w), dx);
    v[2] = -(float)s[1];
    v[3] = __fmul_rn(f16(w + 2), dx);
}
// Q6_K: sum += (d·d_x)·float(isum).
template <> __device__ void ints<Q6_K>(const uint8_t* w, const uint8_t* x, int p, int* s) {
    int half = p >> 1, sub = p & 1;
    const uint8_t* ql = w + 64 * half;
    const uint8_t* qh = w + 128 + 32 * half;
    const int8_t* sc = (const int8_t*)(w + 192 + 8 * half);
    const uint8_t* y = x + 4 + 128 * half;
    // Values biased by 32: Σ(q−32)·y = Σ q·y − 32·Σy, four per dp4a.
    int s1 = 0, s2 = 0, s3 = 0, s4 = 0, y1 = 0, y2 = 0, y3 = 0, y4 = 0;
#pragma unroll
    for (int l = 16 * sub; l < 16 * sub + 16; l += 4) {
        int a = ld32h(ql + l), b = ld32h(ql + l + 32), h = ld32h(qh + l);
        int q1 = (a & 0x0f0f0f0f) | ((h & 0x03030303) << 4);
        int q2 = (b & 0x0f0f0f0f) | (((h >> 2) & 0x03030303) << 4);
        int q3 = ((a >> 4) & 0x0f0f0f0f) | (((h >> 4) & 0x03030303) << 4);
        int q4 = ((b >> 4) & 0x0f0f0f0f) | (((h >> 6) & 0x03030303) << 4);
        int ya = ld32a(y + l), yb = ld32a(y + l + 32), yc = ld32a(y + l + 64), yd = ld32a(y + l + 96);
        s1 = __dp4a(q1, ya, s1);
        s2 = __dp4a(q2, yb, s2);
        s3 = __dp4a(q3, yc, s3);
        s4 = __dp4a(q4, yd, s4);
        y1 = __dp4a(0x01010101, ya, y1);
        y2 = __dp4a(0x01010101, yb, y2);
        y3 = __dp4a(0x01010101, yc, y3);
        y4 = __dp4a(0x01010101, yd, y4);
    }
    s1 -= 32 * y1;
    s2 -= 32 * y2;
    s3 -= 32 * y3;
    s4 -= 32 * y4;
    s[0] += sc[sub] * s1 + sc[sub + 2] * s2 + sc[sub + 4] * s3 + sc[sub + 6] * s4;
}
template <> __device__ void vals<Q6_K>(const uint8_t* w, const uint8_t* x, const int* s, float* v) {
    v[0] = __fmul_rn(__fmul_rn(f16(w + 208), f32le(x)), (float)s[0]);
}

// chain<T>(acc, v, c): chain c's step over one block's values.
template <int T> __device__ __forceinline__ float chain(float acc, const float* v, int c) {
    switch (T) {
    case Q4_0: case Q3_K: case Q4_K: case Q6_K: return __fadd_rn(acc, v[0]);
    case Q4_1: return fma32(v[2], v[3], fma32(v[0], v[1], acc));
    case Q8_0: return fma32(v[0], v[1], acc);
    case Q5_K: return fma32(v[2], v[3], fma32(v[0], v[1], acc));
    case Q5_0: return fma32(v[0], v[1 + c], acc);
    case Q5_1: return c < 8 ? fma32(v[0], v[1 + c], acc) : fma32(v[9], v[10], acc);
    case Q2_K: return fma32(v[1], v[10 + c], fma32(v[0], v[2 + c], acc));
    }
    return acc;
}

// hsum8 of core/quant over the accumulators of lanes base..base+7 (lane
// base+8: Q5_1's summs). Every lane shuffles; lane base keeps the result.
template <int T> __device__ __forceinline__ float finish(float acc, int base) {
    float a[9];
#pragma unroll
    for (int l = 0; l < 9; l++) a[l] = __shfl_sync(0xffffffffu, acc, (base + l) & 31);
    float r0 = __fadd_rn(a[4], a[0]), r1 = __fadd_rn(a[5], a[1]), r2 = __fadd_rn(a[6], a[2]), r3 = __fadd_rn(a[7], a[3]);
    float h = __fadd_rn(__fadd_rn(r0, r2), __fadd_rn(r1, r3));
    if (T == Q5_1) h = __fadd_rn(h, a[8]);
    return dotc<T>::NCH == 1 ? acc : h;
}

// Batched mat-vec: the chains of several tokens run on different lanes at
// once. NCHS lanes per token (1, 8 or 16), NTB tokens per warp pass.
template <int T> struct bat {
    enum { NCHS = dotc<T>::NCH == 1 ? 1 : (dotc<T>::NCH <= 8 ? 8 : 16), NTB = dotc<T>::NCH == 1 ? 8 : 32 / NCHS };
};

// ------------------------------------------------------------- mat-vec
// out[t][row] = W[row] · X[t]: one warp per weight row, four rows per block
// of 128 threads. The warp takes 32/NL blocks at a time (four times that
// per pass for one token): their integer sums in parallel (NL lanes per
// block), the blocks' float inputs to shared memory, then each token's
// float chain over the blocks in order on its own lanes. NT tokens share each weight block (decode: 1; batches:
// bat<T>::NTB per grid row). grid (ceil(rows/4), ceil(T/NT)).

template <int T, int NT>
__device__ void matvec_q(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk, long long wrb, long long xrb, int ntok, int t0) {
    // A pass covers M·BPC blocks: each lane computes the integer parts of M
    // blocks (their loads in flight together) before the chains run.
    constexpr int NL = dotc<T>::NL, NI = dotc<T>::NI, NV = dotc<T>::NV, BPC = 32 / NL, NCHS = bat<T>::NCHS;
    constexpr int M = NT == 1 ? 4 : 1, BPP = M * BPC;
    __shared__ float sv[4][NT][BPP][NV];
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int row = blockIdx.x * 4 + warp;
    if (row >= rows) return; // whole warps leave together
    int ci = lane / NCHS, cc = lane % NCHS; // the token and chain this lane runs
    bool chainer = ci < NT && cc < dotc<T>::NCH && t0 + ci < ntok;
    float acc = 0.f;
    const uint8_t* w = W + (long long)row * wrb;
    int bl = lane / NL, p = lane % NL;
    for (int c0 = 0; c0 < nblk; c0 += BPP) {
        int nb = min(BPP, nblk - c0);
#pragma unroll
        for (int i = 0; i < NT; i++) {
            if (t0 + i >= ntok) break;
            const uint8_t* xt = X + (long long)(t0 + i) * xrb;
#pragma unroll
            for (int m = 0; m < M; m++) {
                int kb = m * BPC + bl, b = c0 + kb;
                if (M > 1 && c0 + m * BPC >= nblk) break; // the whole warp agrees
                const uint8_t* wb = w + (long long)b * fmt<T>::WB;
                const uint8_t* xb = xt + (long long)b * fmt<T>::XB;
                int s[NI];
#pragma unroll
                for (int k = 0; k < NI; k++) s[k] = 0;
                if (b < nblk) ints<T>(wb, xb, p, s);
                if (NL > 1) {
#pragma unroll
                    for (int k = 0; k < NI; k++) {
                        s[k] += __shfl_xor_sync(0xffffffffu, s[k], 1);
                        s[k] += __shfl_xor_sync(0xffffffffu, s[k], 2);
                    }
                }
                if (p == 0 && b < nblk) vals<T>(wb, xb, s, sv[warp][i][kb]);
            }
        }
        __syncwarp();
        if (chainer) {
            if (nb == BPP) {
                // A full pass: unrolled, so the shared-memory loads issue
                // ahead of the dependent float chain.
#pragma unroll
                for (int k = 0; k < BPP; k++) acc = chain<T>(acc, sv[warp][ci][k], cc);
            } else {
                for (int k = 0; k < nb; k++) acc = chain<T>(acc, sv[warp][ci][k], cc);
            }
        }
        __syncwarp();
    }
    float r = finish<T>(acc, lane - cc);
    if (cc == 0 && ci < NT && t0 + ci < ntok) out[(long long)(t0 + ci) * rows + row] = r;
}

#define MATVEC(name, T) \
    extern "C" __global__ void __launch_bounds__(128) matvec_##name##_1(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk, long long wrb, long long xrb, int ntok) { PDL_ENTRY(); \
        matvec_q<T, 1>(W, X, out, rows, nblk, wrb, xrb, ntok, blockIdx.y); } \
    extern "C" __global__ void __launch_bounds__(128) matvec_##name##_b(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk, long long wrb, long long xrb, int ntok) { PDL_ENTRY(); \
        matvec_q<T, bat<T>::NTB>(W, X, out, rows, nblk, wrb, xrb, ntok, blockIdx.y * bat<T>::NTB); } \
    extern "C" __global__ void __launch_bounds__(128) matvec_id_##name(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk, long long wrb, long long xrb, \
                                                                     const int* ids, int k, int shared, long long expertBytes) { PDL_ENTRY(); \
        int p = blockIdx.y, xr = shared ? p / k : p; \
        matvec_q<T, 1>(W + (long long)ids[p] * expertBytes, X + (long long)xr * xrb, out + (long long)p * rows, rows, nblk, wrb, xrb, 1, 0); }
MATVEC(q4_0, Q4_0) MATVEC(q4_1, Q4_1) MATVEC(q5_0, Q5_0) MATVEC(q5_1, Q5_1) MATVEC(q8_0, Q8_0)
MATVEC(q2_k, Q2_K) MATVEC(q3_k, Q3_K) MATVEC(q4_k, Q4_K) MATVEC(q5_k, Q5_K) MATVEC(q6_k, Q6_K)

// Float weights, as core/quant's dots: lane k of the warp is lane k of the
// CPU's accumulators (element k of every full step); the CPU's reduction
// runs on lane 0 over the lanes' values, then the tail in order.
//   F32:  32 lanes acc += w·x (float32), reduceHadd, float32 tail.
//   F16:  activations rounded to F16, 32 lanes, reduceHadd, float64 tail.
//   BF16: likewise with reduceMovehl.
//   F16F32 (rows a multiple of 16): F32 activations, 16 lanes of fma32,
//         quant.ReduceAdd16 (tinyBLAS).
enum { RED_HADD = 0, RED_MOVEHL = 1 };

template <int NT, typename L, bool TAIL64, int RED>
__device__ void matvec_float(const uint8_t* W, const uint8_t* X, float* out, int rows, int n, long long wrb, long long xrb, int ntok, int t0, L load) {
    __shared__ float sa[4][32];
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int row = blockIdx.x * 4 + warp;
    if (row >= rows) return;
    int np = n & ~31;
    const uint8_t* w = W + (long long)row * wrb;
#pragma unroll
    for (int i = 0; i < NT; i++) {
        if (t0 + i >= ntok) break;
        const uint8_t* x = X + (long long)(t0 + i) * xrb;
        float acc = 0.f;
        for (int k = lane; k < np; k += 32) acc = __fadd_rn(acc, __fmul_rn(load(w, k), load(x, k)));
        sa[warp][lane] = acc;
        __syncwarp();
        if (lane == 0) {
            const float* a = sa[warp];
            float v[8];
#pragma unroll
            for (int l = 0; l < 8; l++) v[l] = __fadd_rn(__fadd_rn(a[l], a[16 + l]), __fadd_rn(a[8 + l], a[24 + l]));
            float t0_ = __fadd_rn(v[0], v[4]), t1 = __fadd_rn(v[1], v[5]), t2 = __fadd_rn(v[2], v[6]), t3 = __fadd_rn(v[3], v[7]);
            float r = RED == RED_HADD ? __fadd_rn(__fadd_rn(t0_, t1), __fadd_rn(t2, t3)) : __fadd_rn(__fadd_rn(t0_, t2), __fadd_rn(t1, t3));
            if (TAIL64) {
                double s = (double)r;
                for (int k = np; k < n; k++) s += (double)__fmul_rn(load(w, k), load(x, k));
                r = (float)s;
            } else {
                for (int k = np; k < n; k++) r = __fadd_rn(r, __fmul_rn(load(w, k), load(x, k)));
            }
            out[(long long)(t0 + i) * rows + row] = r;
        }
        __syncwarp();
    }
}
struct LoadF32 { __device__ float operator()(const uint8_t* p, int k) const { return ((const float*)p)[k]; } };
struct LoadF16 { __device__ float operator()(const uint8_t* p, int k) const { return __half2float(((const __half*)p)[k]); } };
struct LoadBF16 { __device__ float operator()(const uint8_t* p, int k) const { return bf16bits(((const uint16_t*)p)[k]); } };

#define MATVEC_FLOAT(name, L, TAIL64, RED) \
    extern "C" __global__ void __launch_bounds__(128) matvec_##name##_1(const uint8_t* W, const uint8_t* X, float* out, int rows, int n, long long wrb, long long xrb, int ntok) { PDL_ENTRY(); \
        matvec_float<1, L, TAIL64, RED>(W, X, out, rows, n, wrb, xrb, ntok, blockIdx.y, L()); } \
    extern "C" __global__ void __launch_bounds__(128) matvec_##name##_b(const uint8_t* W, const uint8_t* X, float* out, int rows, int n, long long wrb, long long xrb, int ntok) { PDL_ENTRY(); \
        matvec_float<8, L, TAIL64, RED>(W, X, out, rows, n, wrb, xrb, ntok, blockIdx.y * 8, L()); } \
    extern "C" __global__ void __launch_bounds__(128) matvec_id_##name(const uint8_t* W, const uint8_t* X, float* out, int rows, int n, long long wrb, long long xrb, \
                                                                     const int* ids, int k, int shared, long long expertBytes) { PDL_ENTRY(); \
        int p = blockIdx.y, xr = shared ? p / k : p; \
        matvec_float<1, L, TAIL64, RED>(W + (long long)ids[p] * expertBytes, X + (long long)xr * xrb, out + (long long)p * rows, rows, n, wrb, xrb, 1, 0, L()); }
MATVEC_FLOAT(f32, LoadF32, false, RED_HADD) MATVEC_FLOAT(f16, LoadF16, true, RED_HADD) MATVEC_FLOAT(bf16, LoadBF16, true, RED_MOVEHL)

// F16 weights times F32 activations (n a multiple of 16): lanes 0..15 each
// one tinyBLAS accumulator, fma32 per step; then _mm512_reduce_add_ps.
template <int NT>
__device__ void matvec_f16f32_impl(const uint8_t* W, const uint8_t* X, float* out, int rows, int n, long long wrb, long long xrb, int ntok) {
    __shared__ float sa[4][16];
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int row = blockIdx.x * 4 + warp;
    if (row >= rows) return;
    int t0 = blockIdx.y * NT;
    const __half* w = (const __half*)(W + (long long)row * wrb);
#pragma unroll
    for (int i = 0; i < NT; i++) {
        if (t0 + i >= ntok) break;
        const float* x = (const float*)(X + (long long)(t0 + i) * xrb);
        if (lane < 16) {
            float acc = 0.f;
            for (int k = lane; k < n; k += 16) acc = fma32d(__half2float(w[k]), x[k], acc);
            sa[warp][lane] = acc;
        }
        __syncwarp();
        if (lane == 0) {
            const float* a = sa[warp];
            float t3[8], t6[4];
#pragma unroll
            for (int l = 0; l < 8; l++) t3[l] = __fadd_rn(a[8 + l], a[l]);
#pragma unroll
            for (int l = 0; l < 4; l++) t6[l] = __fadd_rn(t3[4 + l], t3[l]);
            out[(long long)(t0 + i) * rows + row] = __fadd_rn(__fadd_rn(t6[0], t6[2]), __fadd_rn(t6[1], t6[3]));
        }
        __syncwarp();
    }
}
extern "C" __global__ void __launch_bounds__(128) matvec_f16f32_1(const uint8_t* W, const uint8_t* X, float* out, int rows, int n, long long wrb, long long xrb, int ntok) { PDL_ENTRY();
    matvec_f16f32_impl<1>(W, X, out, rows, n, wrb, xrb, ntok);
}
extern "C" __global__ void __launch_bounds__(128) matvec_f16f32_b(const uint8_t* W, const uint8_t* X, float* out, int rows, int n, long long wrb, long long xrb, int ntok) { PDL_ENTRY();
    matvec_f16f32_impl<8>(W, X, out, rows, n, wrb, xrb, ntok);
}

// mat_mul_id over F16 experts: ggml_vec_dot_f16 on AVX-512, as the CPU's
// dotF16x512 (activations rounded to F16; 64 lanes over the first n&~63
// elements, lane k of the warp holding CPU lanes k and k+32; then
// GGML_F32x16_REDUCE on lane 0 and the tail added in double). grid
// (rows/4, pairs).
extern "C" __global__ void __launch_bounds__(128) matvec_id_f16x512(const uint8_t* W, const uint8_t* X, float* out, int rows, int n, long long wrb,
                                                                  long long xrb, const int* ids, int k, int shared, long long expertBytes) { PDL_ENTRY();
    __shared__ float sa[4][64];
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int row = blockIdx.x * 4 + warp;
    if (row >= rows) return;
    int p = blockIdx.y, xr = shared ? p / k : p;
    const __half* w = (const __half*)(W + (long long)ids[p] * expertBytes + (long long)row * wrb);
    const __half* x = (const __half*)(X + (long long)xr * xrb);
    int np = n & ~63;
    float a0 = 0.f, a1 = 0.f;
    for (int i = 0; i < np; i += 64) {
        a0 = __fadd_rn(a0, __fmul_rn(__half2float(w[i + lane]), __half2float(x[i + lane])));
        a1 = __fadd_rn(a1, __fmul_rn(__half2float(w[i + 32 + lane]), __half2float(x[i + 32 + lane])));
    }
    sa[warp][lane] = a0;
    sa[warp][32 + lane] = a1;
    __syncwarp();
    if (lane == 0) {
        const float* L = sa[warp];
        float v[16];
#pragma unroll
        for (int l = 0; l < 16; l++) v[l] = __fadd_rn(__fadd_rn(L[l], L[32 + l]), __fadd_rn(L[16 + l], L[48 + l]));
        double tail = 0;
        for (int i = np; i < n; i++) tail += (double)__fmul_rn(__half2float(w[i]), __half2float(x[i]));
        out[(long long)p * rows + row] = (float)((double)reduce_add16(v) + tail);
    }
}
