// Shared helpers of Minfer's CUDA kernels. Compiled with --fmad=false so
// every a*b+c rounds twice, as the CPU backend computes it; the kernels
// follow core/backend/cpu and core/quant operation for operation where the
// result depends on it.
#pragma once
#include <cuda_fp16.h>
#include <stdint.h>

#define WARP 32

// Programmatic dependent launch (pdl.go): PDL_WAIT marks where a kernel
// waits for the kernel before it (griddepcontrol.wait), PDL_LAUNCH where
// it lets the next one start (griddepcontrol.launch_dependents). Compiled
// for compute_80 they are PTX comments; the loader makes them the
// instructions on compute 9.0 and later. Every kernel runs PDL_WAIT before
// any global-memory access (PDL_ENTRY at its top; the staged mat-vecs
// first issue their weight copies) and PDL_LAUNCH after it, on every path.
// The asm statements are compiler barriers either way.
#define PDL_WAIT() asm volatile("// minfer-pdl-wait" ::: "memory")
#define PDL_LAUNCH() asm volatile("// minfer-pdl-launch" ::: "memory")
#define PDL_ENTRY() \
    do {             \
        PDL_WAIT();  \
        PDL_LAUNCH(); \
    } while (0)

__device__ __forceinline__ float f16(const uint8_t* p) {
    uint16_t b = (uint16_t)p[0] | ((uint16_t)p[1] << 8);
    return __half2float(__ushort_as_half(b));
}
__device__ __forceinline__ float f32le(const uint8_t* p) {
    uint32_t b = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
    return __uint_as_float(b);
}
__device__ __forceinline__ float bf16bits(uint16_t b) { return __uint_as_float((uint32_t)b << 16); }
__device__ __forceinline__ uint32_t u32le(const uint8_t* p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
// ld32a: 4 bytes from a 4-aligned address; ld32h: from a 2-aligned one
// (two 16-bit loads). Block layouts fix the alignment: device buffers are
// 256-aligned and rows are whole blocks.
__device__ __forceinline__ int ld32a(const uint8_t* p) { return *(const int*)p; }
__device__ __forceinline__ int ld32h(const uint8_t* p) {
    const uint16_t* h = (const uint16_t*)p;
    return (int)((uint32_t)h[0] | ((uint32_t)h[1] << 16));
}
__device__ __forceinline__ int16_t i16le(const uint8_t* p) { return (int16_t)((uint16_t)p[0] | ((uint16_t)p[1] << 8)); }

// F32ToBF16 of core/quant: NaN keeps its sign and gets a quiet bit, the
// rest rounds to nearest even.
__device__ __forceinline__ uint16_t to_bf16(float f) {
    uint32_t b = __float_as_uint(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(b >> 16) | 0x40;
    return (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
__device__ __forceinline__ uint16_t to_f16(float f) { return __half_as_ushort(__float2half_rn(f)); }
// put_f16 stores f as a little-endian half at a byte address (2-aligned or
// not). The half goes through a 32-bit integer first: storing the bytes of
// the 16-bit conversion register directly (st.u8 of a .b16 holding an f16)
// came out as zero on the H200's JIT.
__device__ __forceinline__ void put_f16(uint8_t* p, float f) {
    uint32_t v = (uint32_t)__half_as_ushort(__float2half_rn(f));
    v = __byte_perm(v, 0, 0x3210); // an integer op: keeps v in a 32-bit register
    p[0] = (uint8_t)(v & 0xffu);
    p[1] = (uint8_t)((v >> 8) & 0xffu);
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ double warp_sum_d(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
// rms_mean_serial: core/backend/cpu's serial chain of the rms_norm mean —
// the float32 squares of a[i] (the row, the residual add's sum already
// taken) summed in double in index order, divided by n, rounded to
// float32. One thread runs it, and only for rows rms_mean cannot settle
// (rare): kept out of line.
__device__ __noinline__ float rms_mean_serial(const float* a, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) {
        const float v = a[i];
        s = __dadd_rn(s, (double)__fmul_rn(v, v));
    }
    return (float)(s / (double)n);
}
// rms_mean: the serial chain's mean from t, the same squares summed in
// any order (the kernels' lanes, warps and blocks). core/backend/cpu's
// normsum.go has the proof: every order's sum lies within
// 2.001·n·2^-53·t of the serial one, so with E = t·(n·2^-51),
// float32((t−E)/n) == float32((t+E)/n) is the serial chain's float32 mean
// (division and conversion are monotonic); otherwise (the mean within E
// of a float32 rounding boundary; t Inf or NaN) the serial chain runs
// (rms_mean_serial over a).
// For n a power of two, the divisions are multiplications by 2^-k: the
// same correctly rounded quotients, without the double divisions' latency.
__device__ __forceinline__ float rms_mean(double t, int n, const float* a) {
    if (n > 1) {
        const double fn = (double)n;
        const double e = __dmul_rn(t, fn * 0x1p-51);
        float lo, hi;
        if ((n & (n - 1)) == 0) {
            const double inv = __longlong_as_double((long long)(1023 - (__ffs(n) - 1)) << 52); // 2^-k, n = 2^k
            lo = (float)__dmul_rn(__dsub_rn(t, e), inv), hi = (float)__dmul_rn(__dadd_rn(t, e), inv);
        } else {
            lo = (float)(__dsub_rn(t, e) / fn), hi = (float)(__dadd_rn(t, e) / fn);
        }
        if (lo == hi) return lo;
    }
    return rms_mean_serial(a, n);
}
// rms_scale: the CPU's 1 / float32(sqrt(float64(mean + eps))). The float
// sqrt rounded once is the double one rounded to float (double rounding
// is innocuous for sqrt when the wider format has 2·24+2 bits or more), so
// __fsqrt_rn, not the double sqrt's longer chain.
__device__ __forceinline__ float rms_scale(float mean, float eps) { return __fdiv_rn(1.f, __fsqrt_rn(mean + eps)); }
// sat8: the nearest integer (ties to even) saturated to int8, as ggml's
// AVX2 quantizers round; f16r: a float rounded through F16.
__device__ __forceinline__ int sat8(float v) {
    int q = __float2int_rn(v);
    return q > 127 ? 127 : (q < -128 ? -128 : q);
}
__device__ __forceinline__ float f16r(float f) { return __half2float(__float2half_rn(f)); }
__device__ __forceinline__ int warp_sum_i(int v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// scaleMinK4 of core/quant: the 6-bit scale and min of sub-block j.
__device__ __forceinline__ void scale_min_k4(int j, const uint8_t* s, int* sc, int* m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}
// scaleQ3K of core/quant.
__device__ __forceinline__ int scale_q3k(int j, const uint8_t* s) {
    int low = j < 8 ? (s[j] & 0xf) : (s[j - 8] >> 4);
    int high = (s[8 + (j % 4)] >> (2 * (j / 4))) & 3;
    return (low | (high << 4)) - 32;
}

// fma32 of the CPU (quant.FMA32): a float32 fused multiply-add rounded once.
__device__ __forceinline__ float fma32(float a, float b, float c) { return __fmaf_rn(a, b, c); }
// fma32d is the float64 route, rounded twice (float32(math.FMA(…)) in Go),
// which quant.DotF16F32 still takes.
__device__ __forceinline__ float fma32d(float a, float b, float c) { return (float)__fma_rn((double)a, (double)b, (double)c); }

// expf of core/backend/cpu (ggml's SIMD expf: range reduction by ln 2 and a
// degree-5 polynomial), bit for bit, so softmax and SiLU agree with the CPU.
__device__ __forceinline__ float cpu_expf(float x) {
    const float shift = 0x1.8p23f, log2e = 0x1.715476p+0f, ln2hi = 0x1.62e4p-1f, ln2lo = 0x1.7f7d1cp-20f;
    const float c0 = 0x1.0e4020p-7f, c1 = 0x1.573e2ep-5f, c2 = 0x1.555e66p-3f, c3 = 0x1.fffdb6p-2f, c4 = 0x1.ffffecp-1f;
    float z = fma32(x, log2e, shift);
    float n = z - shift;
    float b = fma32(-n, ln2lo, fma32(-n, ln2hi, x));
    uint32_t e = __float_as_uint(z) << 23;
    float k = __uint_as_float(e + __float_as_uint(1.0f));
    float u = b * b;
    float j = fma32(fma32(fma32(c0, b, c1), u, fma32(c2, b, c3)), u, c4 * b);
    float an = fabsf(n);
    if (!(an > 126.f)) return fma32(j, k, k);
    uint32_t g = n <= 0.f ? 0x82000000u : 0u;
    float s1 = __uint_as_float(g + 0x7f000000u);
    float s2 = __uint_as_float(e - g);
    if (an > 192.f) return s1 * s1;
    return fma32(s2, j, s2) * s1;
}

// expf16 of core/backend/cpu: one lane of ggml_v_expf(__m512) (the "+1"
// folded into the last FMA, the power of two applied once by scalef). The
// power of two, float64 ldexp(j, n) rounded to float in the CPU's words,
// is done as float products by powers of two: each product is exact but
// for the last, which rounds the same exact value once (the first of two
// is a normal float), so the bits are the same without a chain of double
// operations (j a normal float, |n| ≤ 192).
__device__ __forceinline__ float expf16(float x) {
    const float shift = 0x1.8p23f, log2e = 0x1.715476p+0f, ln2hi = 0x1.62e4p-1f, ln2lo = 0x1.7f7d1cp-20f;
    const float c0 = 0x1.0e4020p-7f, c1 = 0x1.573e2ep-5f, c2 = 0x1.555e66p-3f, c3 = 0x1.fffdb6p-2f, c4 = 0x1.ffffecp-1f;
    float z = fma32(x, log2e, shift);
    float n = __fsub_rn(z, shift);
    if (n != n) return n;
    if (n > 192.f) return INFINITY;
    if (n < -192.f) return 0.f;
    float b = fma32(-n, ln2lo, fma32(-n, ln2hi, x));
    float u = __fmul_rn(b, b);
    float j = fma32(fma32(fma32(c0, b, c1), u, fma32(c2, b, c3)), u, fma32(c4, b, 1.f));
    const int k = (int)n;
    if (k < -126) return __fmul_rn(__fmul_rn(j, __int_as_float((k + 126 + 127) << 23)), 0x1p-126f);
    if (k > 127) return __fmul_rn(__fmul_rn(j, __int_as_float((k - 127 + 127) << 23)), 0x1p127f);
    return __fmul_rn(j, __int_as_float((k + 127) << 23));
}
// expfLibm of the CPU: exp in double, rounded once.
__device__ __forceinline__ float expf_libm(float x) { return (float)exp((double)x); }
// swiglu_v: SiLU(x)·u as the CPU's swiglu computes an element: expf16
// where the element lies in its row's whole 16-blocks (vec), the C
// library's expf on the rest.
__device__ __forceinline__ float swiglu_v(float x, float u, bool vec) {
    const float ex = vec ? expf16(-x) : expf_libm(-x);
    return __fmul_rn(__fdiv_rn(x, __fadd_rn(1.f, ex)), u);
}
// tanhf of the CPU: tanh in double, rounded once.
__device__ __forceinline__ float cpu_tanhf(float x) { return (float)tanh((double)x); }

// _mm512_reduce_add_ps as the CPU's quant.ReduceAdd16 writes it.
__device__ __forceinline__ float reduce_add16(const float* v) {
    float t3[8], t6[4];
#pragma unroll
    for (int l = 0; l < 8; l++) t3[l] = __fadd_rn(v[8 + l], v[l]);
#pragma unroll
    for (int l = 0; l < 4; l++) t6[l] = __fadd_rn(t3[4 + l], t3[l]);
    return __fadd_rn(__fadd_rn(t6[0], t6[2]), __fadd_rn(t6[1], t6[3]));
}

// softmax_weights: core/backend/cpu's softmax of a row of nkv scores (nkv a
// multiple of 16) whose maximum is mx, by the whole block: each 16-block's
// exps (expf16(s − mx)) written to W and summed by reduce_add16 into bs,
// thread 0 adding the blocks' sums in float64 in order into *sum0, then
// every nonzero exp made float(e·(1/Σ)), rounded to F16 and back when f16
// (softmaxSum16 and the F16 weights of the CPU's attention). S may be W.
// Every thread of the block calls it; it returns synchronized.
__device__ __forceinline__ void softmax_weights(const float* S, float* W, float* bs, double* sum0, int nkv, float mx, bool f16) {
    const int tid = threadIdx.x, nth = blockDim.x;
    for (int b = tid; b < nkv / 16; b += nth) {
        float e[16];
#pragma unroll
        for (int l = 0; l < 16; l++) {
            e[l] = expf16(__fsub_rn(S[16 * b + l], mx));
            W[16 * b + l] = e[l];
        }
        bs[b] = reduce_add16(e);
    }
    __syncthreads();
    if (tid == 0) {
        double s = 0;
        for (int b = 0; b < nkv / 16; b++) s += (double)bs[b];
        *sum0 = s;
    }
    __syncthreads();
    const float inv = (float)(1.0 / *sum0);
    for (int j = tid; j < nkv; j += nth) {
        float w = W[j];
        if (w == 0.f) continue;
        w = __fmul_rn(w, inv);
        W[j] = f16 ? __half2float(__float2half_rn(w)) : w;
    }
    __syncthreads();
}
