// Float ops of the llama, qwen2 and architecture graphs, following
// core/backend/cpu's arithmetic bit for bit: rms_norm (x² summed in
// double), broadcast mul/add, swiglu, rope (the theta recurrence in
// float32, cos/sin in double, the FMA rotation), store_kv, attention over
// the K/V cache, and the element-wise ops of the architectures.
#include "common.cuh"

// rms_norm into out; with w, also the broadcast mul by w (wrows rows, 1 or
// the same as x) into out2 — the fused rmsnorm·mul, which still writes the
// norm for any other reader. One block per row; the block's double sum
// of the squares gives the CPU's serial mean through rms_mean.
extern "C" __global__ void rms_norm(const float* x, float* out, const float* w, float* out2, int n, int wrows, float eps) { PDL_ENTRY();
    __shared__ double part[32];
    __shared__ float sscale;
    const float* xr = x + (long long)blockIdx.x * n;
    double s = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float v = xr[i];
        s += (double)(v * v);
    }
    s = warp_sum_d(s);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0;
        for (int k = 0; k < (int)(blockDim.x >> 5); k++) t += part[k];
        float mean = rms_mean(t, n, xr);
        sscale = rms_scale(mean, eps);
    }
    __syncthreads();
    float scale = sscale;
    float* o = out + (long long)blockIdx.x * n;
    if (w) {
        const float* wr = w + (long long)(blockIdx.x % wrows) * n;
        float* o2 = out2 + (long long)blockIdx.x * n;
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            float v = xr[i] * scale;
            o[i] = v;
            o2[i] = v * wr[i];
        }
    } else {
        for (int i = threadIdx.x; i < n; i += blockDim.x) o[i] = xr[i] * scale;
    }
}

// out = x op y, y's yrows rows broadcast over x's rows of n.
extern "C" __global__ void mul_f32(const float* x, const float* y, float* out, int n, int yrows, long long total) { PDL_ENTRY();
    long long yn = (long long)yrows * n;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        out[i] = x[i] * y[i % yn];
}
// mul_rows: each row of n times its own scalar y[row] (Src1 of one column).
extern "C" __global__ void mul_rows(const float* x, const float* y, float* out, int n, long long total) { PDL_ENTRY();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        out[i] = __fmul_rn(x[i], y[i / n]);
}
extern "C" __global__ void add_f32(const float* x, const float* y, float* out, int n, int yrows, long long total) { PDL_ENTRY();
    long long yn = (long long)yrows * n;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        out[i] = x[i] + y[i % yn];
}

// swiglu: siluRow16 of the CPU (ggml_vec_silu_f32 on AVX-512) then the
// product: x/(1+exp(−x)) with expf16 for the elements of a row's full
// 16-blocks, the C library's expf for the rest. Rows of n.
extern "C" __global__ void swiglu(const float* g, const float* u, float* out, int n, long long total) { PDL_ENTRY();
    int full = n & ~15;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        out[i] = swiglu_v(g[i], u[i], (int)(i % n) < full);
    }
}

// scale: x·s. softcap: tanhf(x·inv)·cap (ggml_scale, ggml_tanh, ggml_scale).
extern "C" __global__ void scale_f32(const float* x, float* out, float s, long long total) { PDL_ENTRY();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        out[i] = __fmul_rn(x[i], s);
}
extern "C" __global__ void softcap_f32(const float* x, float* out, float inv, float cap, long long total) { PDL_ENTRY();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        out[i] = __fmul_rn(cpu_tanhf(__fmul_rn(x[i], inv)), cap);
}

// gelu: ggml's F16-table GELU. x ≤ −10 gives 0, x ≥ 10 gives x; otherwise
// the F16 of x goes through gelu_f32 and the result is rounded to F16.
__device__ __forceinline__ float gelu_f32(float x) {
    const float a = 0.044715f, s2pi = 0.79788456080286535587989211986876f;
    float inner = __fmul_rn(__fmul_rn(s2pi, x), __fadd_rn(1.f, __fmul_rn(__fmul_rn(a, x), x)));
    return __fmul_rn(__fmul_rn(0.5f, x), __fadd_rn(1.f, cpu_tanhf(inner)));
}
extern "C" __global__ void gelu_f32k(const float* x, float* out, long long total) { PDL_ENTRY();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        float v = x[i];
        float r;
        if (v <= -10.f) r = 0.f;
        else if (v >= 10.f) r = v;
        else r = __half2float(__float2half_rn(gelu_f32(__half2float(__float2half_rn(v)))));
        out[i] = r;
    }
}
// sigmoid: silu(x)/x as the CPU computes it: siluRow16 over each row of n
// (expf16 on the row's full 16-blocks, the C library's expf on the rest),
// then divided by x.
extern "C" __global__ void sigmoid_f32(const float* x, float* out, int n, long long total) { PDL_ENTRY();
    int full = n & ~15;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        float v = x[i];
        float e = (int)(i % n) < full ? expf16(-v) : expf_libm(-v);
        out[i] = __fdiv_rn(__fdiv_rn(v, __fadd_rn(1.f, e)), v);
    }
}
// softmax of each row of n as the CPU's softMax (ggml_soft_max_f32 on
// AVX-512): the max subtracted, then softmaxSum16 — expf16 on full
// 16-blocks, each block's sum reduced in float32 and added in double, the
// tail through the C library's expf added one by one — then times
// float(1/sum). One thread per row (router rows are short).
extern "C" __global__ void softmax_rows(const float* x, float* out, int n, int rows) { PDL_ENTRY();
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* xr = x + (long long)r * n;
    float* o = out + (long long)r * n;
    float m = -INFINITY;
    for (int i = 0; i < n; i++) m = fmaxf(m, xr[i]);
    double s = 0;
    int i = 0;
    for (; i + 15 < n; i += 16) {
        float e[16];
        for (int l = 0; l < 16; l++) {
            e[l] = expf16(__fsub_rn(xr[i + l], m));
            o[i + l] = e[l];
        }
        s += (double)reduce_add16(e);
    }
    for (; i < n; i++) {
        float e = expf_libm(__fsub_rn(xr[i], m));
        o[i] = e;
        s += (double)e;
    }
    float inv = (float)(1.0 / s);
    for (int k = 0; k < n; k++) o[k] = __fmul_rn(o[k], inv);
}

// rope: one block per token. Thread 0 runs the theta recurrence exactly as
// the CPU (theta *= theta_scale in float32); the pairs' cos/sin are taken
// in double and rounded; then every head of the token is rotated.
extern "C" __global__ void rope(const float* x, float* out, const int* pos, const float* freqs, int headDim, int heads, int dims,
                                int neox, float freqScale, float thetaScale) { PDL_ENTRY();
    extern __shared__ float cs[]; // dims: cos, sin interleaved
    int t = blockIdx.x;
    if (threadIdx.x == 0) {
        float theta = (float)pos[t];
        for (int i = 0; i < dims; i += 2) {
            float ff = freqs ? freqs[i / 2] : 1.f;
            cs[i] = theta / ff; // th before the scale, finished below
            theta *= thetaScale;
        }
    }
    __syncthreads();
    for (int i = 2 * threadIdx.x; i < dims; i += 2 * blockDim.x) {
        float th = freqScale * cs[i];
        cs[i] = (float)cos((double)th);
        cs[i + 1] = (float)sin((double)th);
    }
    __syncthreads();
    int half = dims / 2;
    int per = headDim; // elements per head
    for (int e = threadIdx.x; e < heads * per; e += blockDim.x) {
        int h = e / per, i = e % per;
        long long off = ((long long)t * heads + h) * headDim;
        const float* xr = x + off;
        float* o = out + off;
        if (i >= dims) {
            o[i] = xr[i];
            continue;
        }
        // i is the first element of a pair for the thread that computes it.
        int pair, a, b;
        if (neox) {
            if (i >= half) continue;
            pair = i;
            a = i;
            b = i + half;
        } else {
            if (i & 1) continue;
            pair = i / 2;
            a = i;
            b = i + 1;
        }
        float c = cs[2 * pair], s = cs[2 * pair + 1];
        float x0 = xr[a], x1 = xr[b];
        // The CPU's contracted forms: fma(x0, cos, −(x1·sin)), fma(x0, sin, x1·cos).
        o[a] = fma32(x0, c, -__fmul_rn(x1, s));
        o[b] = fma32(x0, s, __fmul_rn(x1, c));
    }
}

// store_kv: row t of x goes to cache row rows[t], converted to the cache
// type. grid (T).
extern "C" __global__ void store_kv_f16(uint16_t* cache, const float* x, const int* rows, int n, int ctx) { PDL_ENTRY();
    int r = rows[blockIdx.x];
    if (r < 0 || r >= ctx) return;
    for (int i = threadIdx.x; i < n; i += blockDim.x) cache[(long long)r * n + i] = to_f16(x[(long long)blockIdx.x * n + i]);
}
extern "C" __global__ void store_kv_f32(float* cache, const float* x, const int* rows, int n, int ctx) { PDL_ENTRY();
    int r = rows[blockIdx.x];
    if (r < 0 || r >= ctx) return;
    for (int i = threadIdx.x; i < n; i += blockDim.x) cache[(long long)r * n + i] = x[(long long)blockIdx.x * n + i];
}

// top_k: per row, ggml_argsort's exchange sort (descending; ties keep the
// exchange order), the first k indices. One thread per row; rows of at
// most 256.
extern "C" __global__ void top_k(const float* x, int* out, int n, int k, int rows) { PDL_ENTRY();
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* xr = x + (long long)r * n;
    short idx[256];
    for (int j = 0; j < n; j++) idx[j] = (short)j;
    for (int j = 0; j < n; j++)
        for (int m = j + 1; m < n; m++)
            if (xr[idx[j]] < xr[idx[m]]) {
                short t = idx[j];
                idx[j] = idx[m];
                idx[m] = t;
            }
    for (int j = 0; j < k; j++) out[(long long)r * k + j] = idx[j];
}

// moe_weights: the probabilities of the selected experts, divided by their
// total summed in double when normalize. An expert id outside the table
// gives NaN (the CPU refuses it; top_k never makes one). One thread per
// token.
extern "C" __global__ void moe_weights(const float* probs, const int* ids, float* out, int nExp, int k, int normalize, int tokens) { PDL_ENTRY();
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= tokens) return;
    double sum = 0;
    bool bad = false;
    for (int j = 0; j < k; j++) {
        int e = ids[t * k + j];
        if (e < 0 || e >= nExp) {
            bad = true;
            out[t * k + j] = __int_as_float(0x7fc00000);
            continue;
        }
        float v = probs[(long long)t * nExp + e];
        out[t * k + j] = v;
        sum += (double)v;
    }
    if (normalize && !bad) {
        float s = (float)sum;
        for (int j = 0; j < k; j++) out[t * k + j] = __fdiv_rn(out[t * k + j], s);
    }
}

// weighted_sum: out[:, t] = x[:, 0, t]·w[0, t], then + x[:, j, t]·w[j, t]
// for j = 1..k−1 in order.
extern "C" __global__ void weighted_sum(const float* x, const float* w, float* out, int n, int k, long long total) { PDL_ENTRY();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        long long t = i / n, e = i % n;
        float acc = __fmul_rn(x[(t * k) * n + e], w[t * k]);
        for (int j = 1; j < k; j++) acc = __fadd_rn(acc, __fmul_rn(x[(t * k + j) * n + e], w[t * k + j]));
        out[i] = acc;
    }
}

// attn_used: the cache cells in use, as the CPU's attention finds them (the
// last entry of any mask row that is not −Inf, plus one), into *used,
// which the host zeroes first: grid-stride over the mask, each block's
// maximum folded in with atomicMax.
extern "C" __global__ void attn_used(const float* mask, int tokens, int kvLen, int* used) { PDL_ENTRY();
    __shared__ int u;
    if (threadIdx.x == 0) u = 0;
    __syncthreads();
    const long long total = (long long)tokens * kvLen, stride = (long long)gridDim.x * blockDim.x;
    int mine = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        float m = mask[i];
        if (!(isinf(m) && m < 0)) mine = max(mine, (int)(i % kvLen) + 1);
    }
    mine = max(mine, __reduce_max_sync(0xffffffffu, (unsigned)mine));
    if ((threadIdx.x & 31) == 0 && mine > 0) atomicMax(&u, mine);
    __syncthreads();
    if (threadIdx.x == 0 && u > 0) atomicMax(used, u);
}

// attention: one block of 256 threads per (head, token), bit for bit the
// CPU's (core/backend/cpu ops.go and ggml512.go): over nkv = llama.cpp's
// padded n_kv entries, q rounded to F16, each score the AVX-512
// ggml_vec_dot_f16 (64 lanes of products, GGML_F32x16_REDUCE, float64
// tail) by one thread, optionally soft-capped, scaled and masked; softmax
// with expf16 per 16-block, each block's sum reduced in float32 and the
// blocks added in float64 in order; weights times float(1/sum), rounded to
// F16; each output element the same 64-lane dot of weights and a V column
// (thread per (element, lane) chain, then the reduction). With an F32
// cache the dots are float64 sums in order. Dynamic shared memory:
// attentionShared(headDim, kvLen) on the host.
template <bool F16C>
__device__ void attention_impl(const float* q, const void* kc, const void* vc, const float* mask, const int* usedp, float* out, int headDim,
                               int heads, int kvHeads, int kvLen, float scale, float softCap) {
    extern __shared__ float smem[];
    int used = *usedp;
    int nkv = max(32, (used + 31) / 32 * 32);
    int nkvMax = max(32, (kvLen + 31) / 32 * 32);
    float* qh = smem;            // headDim
    float* sc = qh + headDim;    // nkvMax
    float* bs = sc + nkvMax;     // nkvMax/16
    float* L = bs + nkvMax / 16; // 64·headDim (F16 cache)
    __shared__ float red[32];
    __shared__ double sum0;
    int h = blockIdx.x, t = blockIdx.y, tid = threadIdx.x, lane = tid & 31, wid = tid >> 5, nw = blockDim.x >> 5;
    int group = heads / kvHeads, kvh = h / group;
    long long kvRow = (long long)headDim * kvHeads;
    const float* qr = q + ((long long)t * heads + h) * headDim;
    for (int d = tid; d < headDim; d += blockDim.x) qh[d] = F16C ? __half2float(__float2half_rn(qr[d])) : qr[d];
    __syncthreads();
    const float* mr = mask + (long long)t * kvLen;
    int npK = headDim & ~63;
    float mx = -INFINITY;
    for (int j = tid; j < nkv; j += blockDim.x) {
        if (j >= kvLen || (isinf(mr[j]) && mr[j] < 0)) {
            sc[j] = -INFINITY;
            continue;
        }
        long long off = j * kvRow + (long long)kvh * headDim;
        double s;
        if (F16C) {
            const __half* kr = (const __half*)kc + off;
            float v16[16];
#pragma unroll
            for (int l = 0; l < 16; l++) {
                float a[4];
#pragma unroll
                for (int g = 0; g < 4; g++) {
                    float x = 0.f;
                    for (int d = l + 16 * g; d < npK; d += 64) x = __fadd_rn(x, __fmul_rn(qh[d], __half2float(kr[d])));
                    a[g] = x;
                }
                v16[l] = __fadd_rn(__fadd_rn(a[0], a[2]), __fadd_rn(a[1], a[3]));
            }
            s = (double)reduce_add16(v16);
            for (int d = npK; d < headDim; d++) s += (double)__fmul_rn(qh[d], __half2float(kr[d]));
        } else {
            const float* kr = (const float*)kc + off;
            s = 0;
            for (int d = 0; d < headDim; d++) s += (double)__fmul_rn(qh[d], kr[d]);
        }
        float v = (float)s;
        if (softCap > 0.f) v = __fmul_rn(cpu_tanhf(__fmul_rn(v, __fdiv_rn(1.f, softCap))), softCap);
        v = __fadd_rn(__fmul_rn(v, scale), mr[j]);
        sc[j] = v;
        mx = fmaxf(mx, v);
    }
    mx = warp_max(mx);
    if (lane == 0) red[wid] = mx;
    __syncthreads();
    if (tid == 0) {
        float m = red[0];
        for (int k = 1; k < nw; k++) m = fmaxf(m, red[k]);
        red[0] = m;
    }
    __syncthreads();
    mx = red[0];
    // softmaxSum16: nkv is a multiple of 32, so every entry is in a full 16-block.
    softmax_weights(sc, sc, bs, &sum0, nkv, mx, F16C);
    float* o = out + (long long)t * heads * headDim + (long long)h * headDim;
    const long long vbase = (long long)kvh * headDim;
    if (F16C) {
        int npV = nkv & ~63;
        const __half* vh = (const __half*)vc;
        for (int it = tid; it < 64 * headDim; it += blockDim.x) {
            int d = it % headDim, m = it / headDim;
            float a = 0.f;
            for (int j = m; j < npV; j += 64) {
                float w = sc[j];
                if (w == 0.f) continue;
                a = __fadd_rn(a, __fmul_rn(w, __half2float(vh[j * kvRow + vbase + d])));
            }
            L[m * headDim + d] = a;
        }
        __syncthreads();
        for (int d = tid; d < headDim; d += blockDim.x) {
            float v16[16];
#pragma unroll
            for (int l = 0; l < 16; l++)
                v16[l] = __fadd_rn(__fadd_rn(L[l * headDim + d], L[(32 + l) * headDim + d]), __fadd_rn(L[(16 + l) * headDim + d], L[(48 + l) * headDim + d]));
            double tail = 0;
            for (int j = npV; j < nkv; j++) {
                float w = sc[j];
                if (w == 0.f) continue;
                tail += (double)__fmul_rn(w, __half2float(vh[j * kvRow + vbase + d]));
            }
            o[d] = (float)((double)reduce_add16(v16) + tail);
        }
    } else {
        const float* vf = (const float*)vc;
        for (int d = tid; d < headDim; d += blockDim.x) {
            double tail = 0;
            for (int j = 0; j < nkv; j++) {
                float w = sc[j];
                if (w == 0.f) continue;
                tail += (double)__fmul_rn(w, vf[j * kvRow + vbase + d]);
            }
            o[d] = (float)(0.0 + tail);
        }
    }
}

extern "C" __global__ void __launch_bounds__(256) attention_f16(const float* q, const void* kc, const void* vc, const float* mask, const int* used,
                                                                float* out, int headDim, int heads, int kvHeads, int kvLen, float scale, float softCap) { PDL_ENTRY();
    attention_impl<true>(q, kc, vc, mask, used, out, headDim, heads, kvHeads, kvLen, scale, softCap);
}
extern "C" __global__ void __launch_bounds__(256) attention_f32(const float* q, const void* kc, const void* vc, const float* mask, const int* used,
                                                                float* out, int headDim, int heads, int kvHeads, int kvLen, float scale, float softCap) { PDL_ENTRY();
    attention_impl<false>(q, kc, vc, mask, used, out, headDim, heads, kvHeads, kvLen, scale, softCap);
}

