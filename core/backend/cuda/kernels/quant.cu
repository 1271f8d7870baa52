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
    for (int e = threadIdx.x; e < n; e += blockDim.x) o[e] = deq<T>(row + (e / fmt<T>::BS) * fmt<T>::WB, e % fmt<T>::BS);
}

#define GET_ROWS(name, T) \
    extern "C" __global__ void get_rows_##name(const uint8_t* table, const int* ids, float* out, int n, long long rb, int nrows) { \
        get_rows_blocks<T>(table, ids, out, n, rb, nrows); }
GET_ROWS(q4_0, Q4_0) GET_ROWS(q4_1, Q4_1) GET_ROWS(q5_0, Q5_0) GET_ROWS(q5_1, Q5_1) GET_ROWS(q8_0, Q8_0)
GET_ROWS(q2_k, Q2_K) GET_ROWS(q3_k, Q3_K) GET_ROWS(q4_k, Q4_K) GET_ROWS(q5_k, Q5_K) GET_ROWS(q6_k, Q6_K)

extern "C" __global__ void get_rows_f32(const uint8_t* table, const int* ids, float* out, int n, long long rb, int nrows) {
    int id = ids[blockIdx.x];
    float* o = out + (long long)blockIdx.x * n;
    const float* row = (const float*)(table + (long long)id * rb);
    for (int e = threadIdx.x; e < n; e += blockDim.x) o[e] = (id < 0 || id >= nrows) ? __int_as_float(0x7fc00000) : row[e];
}
extern "C" __global__ void get_rows_f16(const uint8_t* table, const int* ids, float* out, int n, long long rb, int nrows) {
    int id = ids[blockIdx.x];
    float* o = out + (long long)blockIdx.x * n;
    const __half* row = (const __half*)(table + (long long)id * rb);
    for (int e = threadIdx.x; e < n; e += blockDim.x) o[e] = (id < 0 || id >= nrows) ? __int_as_float(0x7fc00000) : __half2float(row[e]);
}
extern "C" __global__ void get_rows_bf16(const uint8_t* table, const int* ids, float* out, int n, long long rb, int nrows) {
    int id = ids[blockIdx.x];
    float* o = out + (long long)blockIdx.x * n;
    const uint16_t* row = (const uint16_t*)(table + (long long)id * rb);
    for (int e = threadIdx.x; e < n; e += blockDim.x) o[e] = (id < 0 || id >= nrows) ? __int_as_float(0x7fc00000) : bf16bits(row[e]);
}

// ------------------------------------------------------------ quantizers
// One warp per 32-element block: q8_0 and q8_1 (ggml's AVX2 rounding: ties
// to even, saturating). grid (blocks per row, rows).

__device__ __forceinline__ int sat8(float v) {
    int q = __float2int_rn(v);
    return q > 127 ? 127 : (q < -128 ? -128 : q);
}

extern "C" __global__ void quant_q8_0(const float* x, uint8_t* y, int n, long long yrb) {
    int lane = threadIdx.x;
    float v = x[(long long)blockIdx.y * n + blockIdx.x * 32 + lane];
    float amax = warp_max(fabsf(v));
    uint8_t* b = y + (long long)blockIdx.y * yrb + blockIdx.x * 34;
    float id = amax != 0.f ? 127.f / amax : 0.f;
    int q = sat8(v * id);
    b[2 + lane] = (uint8_t)(int8_t)q;
    if (lane == 0) put_f16(b, amax / 127.f);
}

extern "C" __global__ void quant_q8_1(const float* x, uint8_t* y, int n, long long yrb) {
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
extern "C" __global__ void quant_q8_k(const float* x, uint8_t* y, int n, long long yrb) {
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

extern "C" __global__ void quant_f16(const float* x, uint16_t* y, long long total) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) y[i] = to_f16(x[i]);
}
extern "C" __global__ void quant_bf16(const float* x, uint16_t* y, long long total) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) y[i] = to_bf16(x[i]);
}

// ----------------------------------------------------------- block dots
// dot_part<T>(weight block, activation block, part): the integer sums of
// core/quant's vec-dot for that part of the block, scaled per block in
// float32. Parts of a K-quant super-block are 64 elements.

template <int T> __device__ float dot_part(const uint8_t* w, const uint8_t* x, int p);

template <> __device__ float dot_part<Q4_0>(const uint8_t* w, const uint8_t* x, int) {
    const int8_t* qx = (const int8_t*)(x + 2);
    int sumi = 0;
#pragma unroll
    for (int j = 0; j < 16; j++) {
        int b = w[2 + j];
        sumi += ((b & 0xf) - 8) * qx[j] + ((b >> 4) - 8) * qx[j + 16];
    }
    return (float)sumi * (f16(w) * f16(x));
}
template <> __device__ float dot_part<Q4_1>(const uint8_t* w, const uint8_t* x, int) {
    const int8_t* qx = (const int8_t*)(x + 4);
    int sumi = 0;
#pragma unroll
    for (int j = 0; j < 16; j++) {
        int b = w[4 + j];
        sumi += (b & 0xf) * qx[j] + (b >> 4) * qx[j + 16];
    }
    return (f16(w) * f16(x)) * (float)sumi + f16(w + 2) * f16(x + 2);
}
template <> __device__ float dot_part<Q5_0>(const uint8_t* w, const uint8_t* x, int) {
    const int8_t* qx = (const int8_t*)(x + 2);
    uint32_t qh = u32le(w + 2);
    int sumi = 0;
#pragma unroll
    for (int j = 0; j < 16; j++) {
        uint32_t b = w[6 + j];
        int x0 = (int)((b & 0xf) | ((qh >> j << 4) & 0x10)) - 16;
        int x1 = (int)((b >> 4) | ((qh >> (j + 12)) & 0x10)) - 16;
        sumi += x0 * qx[j] + x1 * qx[j + 16];
    }
    return (float)sumi * (f16(w) * f16(x));
}
template <> __device__ float dot_part<Q5_1>(const uint8_t* w, const uint8_t* x, int) {
    const int8_t* qx = (const int8_t*)(x + 4);
    uint32_t qh = u32le(w + 4);
    int sumi = 0;
#pragma unroll
    for (int j = 0; j < 16; j++) {
        uint32_t b = w[8 + j];
        int x0 = (int)((b & 0xf) | ((qh >> j << 4) & 0x10));
        int x1 = (int)((b >> 4) | ((qh >> (j + 12)) & 0x10));
        sumi += x0 * qx[j] + x1 * qx[j + 16];
    }
    return (f16(w) * f16(x)) * (float)sumi + f16(w + 2) * f16(x + 2);
}
template <> __device__ float dot_part<Q8_0>(const uint8_t* w, const uint8_t* x, int) {
    const int8_t* qw = (const int8_t*)(w + 2);
    const int8_t* qx = (const int8_t*)(x + 2);
    int sumi = 0;
#pragma unroll
    for (int j = 0; j < 32; j += 4) {
        int a = (int)(uint8_t)qw[j] | ((int)(uint8_t)qw[j + 1] << 8) | ((int)(uint8_t)qw[j + 2] << 16) | ((int)(uint8_t)qw[j + 3] << 24);
        int bx = (int)(uint8_t)qx[j] | ((int)(uint8_t)qx[j + 1] << 8) | ((int)(uint8_t)qx[j + 2] << 16) | ((int)(uint8_t)qx[j + 3] << 24);
        sumi = __dp4a(a, bx, sumi);
    }
    return (float)sumi * (f16(w) * f16(x));
}

__device__ __forceinline__ int bsum(const uint8_t* x, int j) { return i16le(x + 260 + 2 * j); }

template <> __device__ float dot_part<Q2_K>(const uint8_t* w, const uint8_t* x, int p) {
    const int8_t* q8 = (const int8_t*)(x + 4);
    const uint8_t* scales = w;
    int half = p >> 1;
    const uint8_t* q = w + 16 + 32 * half;
    int isum = 0, summs = 0;
#pragma unroll
    for (int jj = 0; jj < 2; jj++) {
        int j = 2 * (p & 1) + jj;
        int shift = 2 * j;
        const int8_t* y = q8 + 128 * half + 32 * j;
        int s0 = 0, s1 = 0;
#pragma unroll
        for (int l = 0; l < 16; l++) {
            s0 += y[l] * ((q[l] >> shift) & 3);
            s1 += y[l + 16] * ((q[l + 16] >> shift) & 3);
        }
        int is = 8 * half + 2 * j;
        isum += (scales[is] & 0xf) * s0 + (scales[is + 1] & 0xf) * s1;
        summs += bsum(x, is) * (scales[is] >> 4) + bsum(x, is + 1) * (scales[is + 1] >> 4);
    }
    float dx = f32le(x);
    float dall = dx * f16(w + 80), dmin = dx * f16(w + 82);
    return dall * (float)isum - dmin * (float)summs;
}
template <> __device__ float dot_part<Q3_K>(const uint8_t* w, const uint8_t* x, int p) {
    const int8_t* q8 = (const int8_t*)(x + 4);
    const uint8_t* hmask = w;
    const uint8_t* scales = w + 96;
    int half = p >> 1;
    const uint8_t* q = w + 32 + 32 * half;
    int isum = 0;
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
        isum += scale_q3k(is, scales) * s0 + scale_q3k(is + 1, scales) * s1;
    }
    return (f16(w + 108) * f32le(x)) * (float)isum;
}
template <> __device__ float dot_part<Q4_K>(const uint8_t* w, const uint8_t* x, int j) {
    const int8_t* y = (const int8_t*)(x + 4) + 64 * j;
    const uint8_t* q = w + 16 + 32 * j;
    int sc0, m0, sc1, m1;
    scale_min_k4(2 * j, w + 4, &sc0, &m0);
    scale_min_k4(2 * j + 1, w + 4, &sc1, &m1);
    int summs = m0 * (bsum(x, 4 * j) + bsum(x, 4 * j + 1)) + m1 * (bsum(x, 4 * j + 2) + bsum(x, 4 * j + 3));
    int s0 = 0, s1 = 0;
#pragma unroll
    for (int l = 0; l < 32; l += 4) {
        uint32_t qq = (uint32_t)q[l] | ((uint32_t)q[l + 1] << 8) | ((uint32_t)q[l + 2] << 16) | ((uint32_t)q[l + 3] << 24);
        int lo = (int)(qq & 0x0f0f0f0fu), hi = (int)((qq >> 4) & 0x0f0f0f0fu);
        int y0 = *(const int*)(y + l), y1 = *(const int*)(y + l + 32);
        s0 = __dp4a(lo, y0, s0);
        s1 = __dp4a(hi, y1, s1);
    }
    int isum = sc0 * s0 + sc1 * s1;
    float dx = f32le(x);
    float d = dx * f16(w), dmin = dx * f16(w + 2);
    return d * (float)isum - dmin * (float)summs;
}
template <> __device__ float dot_part<Q5_K>(const uint8_t* w, const uint8_t* x, int j) {
    const int8_t* y = (const int8_t*)(x + 4) + 64 * j;
    const uint8_t* q = w + 48 + 32 * j;
    const uint8_t* qh = w + 16;
    int sc0, m0, sc1, m1;
    scale_min_k4(2 * j, w + 4, &sc0, &m0);
    scale_min_k4(2 * j + 1, w + 4, &sc1, &m1);
    int summs = m0 * (bsum(x, 4 * j) + bsum(x, 4 * j + 1)) + m1 * (bsum(x, 4 * j + 2) + bsum(x, 4 * j + 3));
    int s0 = 0, s1 = 0;
    int b0 = 2 * j, b1 = 2 * j + 1;
#pragma unroll
    for (int l = 0; l < 32; l++) {
        int v0 = (q[l] & 0xf) | (((qh[l] >> b0) & 1) << 4);
        int v1 = (q[l] >> 4) | (((qh[l] >> b1) & 1) << 4);
        s0 += v0 * y[l];
        s1 += v1 * y[l + 32];
    }
    int isum = sc0 * s0 + sc1 * s1;
    float dx = f32le(x);
    float d = dx * f16(w), dmin = dx * f16(w + 2);
    return d * (float)isum - dmin * (float)summs;
}
template <> __device__ float dot_part<Q6_K>(const uint8_t* w, const uint8_t* x, int p) {
    int half = p >> 1, sub = p & 1;
    const uint8_t* ql = w + 64 * half;
    const uint8_t* qh = w + 128 + 32 * half;
    const int8_t* sc = (const int8_t*)(w + 192 + 8 * half);
    const int8_t* y = (const int8_t*)(x + 4) + 128 * half;
    int s1 = 0, s2 = 0, s3 = 0, s4 = 0;
#pragma unroll
    for (int l = 16 * sub; l < 16 * sub + 16; l++) {
        int h = qh[l];
        int q1 = ((ql[l] & 0xf) | ((h & 3) << 4)) - 32;
        int q2 = ((ql[l + 32] & 0xf) | (((h >> 2) & 3) << 4)) - 32;
        int q3 = ((ql[l] >> 4) | (((h >> 4) & 3) << 4)) - 32;
        int q4 = ((ql[l + 32] >> 4) | ((h >> 6) << 4)) - 32;
        s1 += q1 * y[l];
        s2 += q2 * y[l + 32];
        s3 += q3 * y[l + 64];
        s4 += q4 * y[l + 96];
    }
    int isum = sc[sub] * s1 + sc[sub + 2] * s2 + sc[sub + 4] * s3 + sc[sub + 6] * s4;
    return (f16(w + 208) * f32le(x)) * (float)isum;
}

// ------------------------------------------------------------- mat-vec
// out[t][row] = W[row] · X[t]: one warp per weight row, four rows per block
// of 128 threads; each lane takes parts of the row's blocks in turn and the
// warp sums the lanes. NT tokens share each weight read (decode: 1; larger
// batches: 8 per grid row). grid (ceil(rows/4), ceil(T/NT)).

template <int T, int NT>
__device__ void matvec_q(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk, long long wrb, long long xrb, int ntok) {
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int row = blockIdx.x * 4 + warp;
    if (row >= rows) return;
    int t0 = blockIdx.y * NT;
    float acc[NT];
#pragma unroll
    for (int i = 0; i < NT; i++) acc[i] = 0.f;
    const uint8_t* w = W + (long long)row * wrb;
    int nparts = nblk * fmt<T>::NSUB;
    for (int k = lane; k < nparts; k += 32) {
        int b = k / fmt<T>::NSUB, p = k % fmt<T>::NSUB;
        const uint8_t* wb = w + (long long)b * fmt<T>::WB;
#pragma unroll
        for (int i = 0; i < NT; i++)
            if (t0 + i < ntok) acc[i] += dot_part<T>(wb, X + (long long)(t0 + i) * xrb + (long long)b * fmt<T>::XB, p);
    }
#pragma unroll
    for (int i = 0; i < NT; i++) {
        float s = warp_sum(acc[i]);
        if (lane == 0 && t0 + i < ntok) out[(long long)(t0 + i) * rows + row] = s;
    }
}

#define MATVEC(name, T) \
    extern "C" __global__ void __launch_bounds__(128) matvec_##name##_1(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk, long long wrb, long long xrb, int ntok) { \
        matvec_q<T, 1>(W, X, out, rows, nblk, wrb, xrb, ntok); } \
    extern "C" __global__ void __launch_bounds__(128) matvec_##name##_8(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk, long long wrb, long long xrb, int ntok) { \
        matvec_q<T, 8>(W, X, out, rows, nblk, wrb, xrb, ntok); }
MATVEC(q4_0, Q4_0) MATVEC(q4_1, Q4_1) MATVEC(q5_0, Q5_0) MATVEC(q5_1, Q5_1) MATVEC(q8_0, Q8_0)
MATVEC(q2_k, Q2_K) MATVEC(q3_k, Q3_K) MATVEC(q4_k, Q4_K) MATVEC(q5_k, Q5_K) MATVEC(q6_k, Q6_K)

// Float weights: F32 against F32 activations, F16 and BF16 against
// activations rounded to the same type (ggml's vec_dot_type), products and
// sums in float32. n elements per row; the lane stride keeps loads
// coalesced.
template <int NT, typename L>
__device__ void matvec_float(const uint8_t* W, const uint8_t* X, float* out, int rows, int n, long long wrb, long long xrb, int ntok, L load) {
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int row = blockIdx.x * 4 + warp;
    if (row >= rows) return;
    int t0 = blockIdx.y * NT;
    float acc[NT];
#pragma unroll
    for (int i = 0; i < NT; i++) acc[i] = 0.f;
    const uint8_t* w = W + (long long)row * wrb;
    for (int k = lane; k < n; k += 32) {
        float wv = load(w, k);
#pragma unroll
        for (int i = 0; i < NT; i++)
            if (t0 + i < ntok) acc[i] += wv * load(X + (long long)(t0 + i) * xrb, k);
    }
#pragma unroll
    for (int i = 0; i < NT; i++) {
        float s = warp_sum(acc[i]);
        if (lane == 0 && t0 + i < ntok) out[(long long)(t0 + i) * rows + row] = s;
    }
}
struct LoadF32 { __device__ float operator()(const uint8_t* p, int k) const { return ((const float*)p)[k]; } };
struct LoadF16 { __device__ float operator()(const uint8_t* p, int k) const { return __half2float(((const __half*)p)[k]); } };
struct LoadBF16 { __device__ float operator()(const uint8_t* p, int k) const { return bf16bits(((const uint16_t*)p)[k]); } };

#define MATVEC_FLOAT(name, L) \
    extern "C" __global__ void __launch_bounds__(128) matvec_##name##_1(const uint8_t* W, const uint8_t* X, float* out, int rows, int n, long long wrb, long long xrb, int ntok) { \
        matvec_float<1>(W, X, out, rows, n, wrb, xrb, ntok, L()); } \
    extern "C" __global__ void __launch_bounds__(128) matvec_##name##_8(const uint8_t* W, const uint8_t* X, float* out, int rows, int n, long long wrb, long long xrb, int ntok) { \
        matvec_float<8>(W, X, out, rows, n, wrb, xrb, ntok, L()); }
MATVEC_FLOAT(f32, LoadF32) MATVEC_FLOAT(f16, LoadF16) MATVEC_FLOAT(bf16, LoadBF16)
