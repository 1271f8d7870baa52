// Float ops of the llama/qwen2 block, following core/backend/cpu's
// arithmetic: rms_norm (x² summed in double), broadcast mul/add, swiglu,
// rope (the theta recurrence in float32, cos/sin in double), store_kv,
// and attention over the K/V cache.
#include "common.cuh"

// rms_norm into out; with w, also the broadcast mul by w (wrows rows, 1 or
// the same as x) into out2 — the fused rmsnorm·mul, which still writes the
// norm for any other reader. One block per row.
extern "C" __global__ void rms_norm(const float* x, float* out, const float* w, float* out2, int n, int wrows, float eps) {
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
        float mean = (float)(t / (double)n);
        sscale = 1.f / (float)sqrt((double)(mean + eps));
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
extern "C" __global__ void mul_f32(const float* x, const float* y, float* out, int n, int yrows, long long total) {
    long long yn = (long long)yrows * n;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        out[i] = x[i] * y[i % yn];
}
extern "C" __global__ void add_f32(const float* x, const float* y, float* out, int n, int yrows, long long total) {
    long long yn = (long long)yrows * n;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        out[i] = x[i] + y[i % yn];
}

// swiglu: x/(1+expf(-x)) * u, with the CPU's expf.
extern "C" __global__ void swiglu(const float* g, const float* u, float* out, long long total) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        float x = g[i];
        out[i] = x / (1.f + cpu_expf(-x)) * u[i];
    }
}

// rope: one block per token. Thread 0 runs the theta recurrence exactly as
// the CPU (theta *= theta_scale in float32); the pairs' cos/sin are taken
// in double and rounded; then every head of the token is rotated.
extern "C" __global__ void rope(const float* x, float* out, const int* pos, const float* freqs, int headDim, int heads, int dims,
                                int neox, float freqScale, float thetaScale) {
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
        o[a] = x0 * c - x1 * s;
        o[b] = x0 * s + x1 * c;
    }
}

// store_kv: row t of x goes to cache row rows[t], converted to the cache
// type. grid (T).
extern "C" __global__ void store_kv_f16(uint16_t* cache, const float* x, const int* rows, int n, int ctx) {
    int r = rows[blockIdx.x];
    if (r < 0 || r >= ctx) return;
    for (int i = threadIdx.x; i < n; i += blockDim.x) cache[(long long)r * n + i] = to_f16(x[(long long)blockIdx.x * n + i]);
}
extern "C" __global__ void store_kv_f32(float* cache, const float* x, const int* rows, int n, int ctx) {
    int r = rows[blockIdx.x];
    if (r < 0 || r >= ctx) return;
    for (int i = threadIdx.x; i < n; i += blockDim.x) cache[(long long)r * n + i] = x[(long long)blockIdx.x * n + i];
}

// attention: one block of 256 threads per (head, token). Scores are the
// CPU's: each q·k summed in double by one thread in head-dimension order
// (q rounded to f16 for an F16 cache), scaled, masked; softmax with expf
// and a double sum; the weights rounded to f16 for an F16 cache; the output
// summed in double over the keys (each warp takes every eighth key, the
// eight partial sums added in order). Shared memory: kvLen scores, headDim
// q values, 8·headDim partial sums.
template <bool F16C>
__device__ void attention_impl(const float* q, const void* kc, const void* vc, const float* mask, float* out, int headDim, int heads,
                               int kvHeads, int kvLen, float scale) {
    extern __shared__ double smem[];
    double* acc = smem;                                // 8 * headDim
    float* qh = (float*)(acc + 8 * headDim);           // headDim
    float* sc = qh + headDim;                          // kvLen
    __shared__ float red[32];
    __shared__ double redd[32];
    int h = blockIdx.x, t = blockIdx.y, tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
    int group = heads / kvHeads, kvh = h / group;
    long long kvRow = (long long)headDim * kvHeads;
    const float* qr = q + ((long long)t * heads + h) * headDim;
    for (int d = tid; d < headDim; d += blockDim.x) qh[d] = F16C ? __half2float(__float2half_rn(qr[d])) : qr[d];
    __syncthreads();
    const float* mr = mask + (long long)t * kvLen;
    float mx = -INFINITY;
    for (int j = tid; j < kvLen; j += blockDim.x) {
        float m = mr[j];
        if (isinf(m) && m < 0) {
            sc[j] = m;
            continue;
        }
        long long off = j * kvRow + (long long)kvh * headDim;
        double s = 0;
        if (F16C) {
            const __half* kr = (const __half*)kc + off;
            for (int d = 0; d < headDim; d++) s += (double)(qh[d] * __half2float(kr[d]));
        } else {
            const float* kr = (const float*)kc + off;
            for (int d = 0; d < headDim; d++) s += (double)(qh[d] * kr[d]);
        }
        float v = (float)s * scale + m;
        sc[j] = v;
        mx = fmaxf(mx, v);
    }
    mx = warp_max(mx);
    if (lane == 0) red[wid] = mx;
    __syncthreads();
    if (tid == 0) {
        float m = red[0];
        for (int k = 1; k < (int)(blockDim.x >> 5); k++) m = fmaxf(m, red[k]);
        red[0] = m;
    }
    __syncthreads();
    mx = red[0];
    __syncthreads();
    double sum = 0;
    for (int j = tid; j < kvLen; j += blockDim.x) {
        float v = sc[j];
        if (isinf(v) && v < 0) {
            sc[j] = 0.f;
            continue;
        }
        float e = cpu_expf(v - mx);
        sc[j] = e;
        sum += (double)e;
    }
    sum = warp_sum_d(sum);
    if (lane == 0) redd[wid] = sum;
    __syncthreads();
    if (tid == 0) {
        double s = 0;
        for (int k = 0; k < (int)(blockDim.x >> 5); k++) s += redd[k];
        redd[0] = s;
    }
    __syncthreads();
    float inv = (float)(1.0 / redd[0]);
    for (int j = tid; j < kvLen; j += blockDim.x) {
        float w = sc[j];
        if (w == 0.f) continue;
        w *= inv;
        sc[j] = F16C ? __half2float(__float2half_rn(w)) : w;
    }
    __syncthreads();
    int nw = blockDim.x >> 5;
    for (int d = lane; d < headDim; d += 32) {
        double a = 0;
        for (int j = wid; j < kvLen; j += nw) {
            float w = sc[j];
            if (w == 0.f) continue;
            long long off = j * kvRow + (long long)kvh * headDim + d;
            float v = F16C ? __half2float(((const __half*)vc)[off]) : ((const float*)vc)[off];
            a += (double)(w * v);
        }
        acc[wid * headDim + d] = a;
    }
    __syncthreads();
    float* o = out + (long long)t * heads * headDim + (long long)h * headDim;
    for (int d = tid; d < headDim; d += blockDim.x) {
        double a = 0;
        for (int k = 0; k < nw; k++) a += acc[k * headDim + d];
        o[d] = (float)a;
    }
}

extern "C" __global__ void __launch_bounds__(256) attention_f16(const float* q, const void* kc, const void* vc, const float* mask, float* out,
                                                                int headDim, int heads, int kvHeads, int kvLen, float scale) {
    attention_impl<true>(q, kc, vc, mask, out, headDim, heads, kvHeads, kvLen, scale);
}
extern "C" __global__ void __launch_bounds__(256) attention_f32(const float* q, const void* kc, const void* vc, const float* mask, float* out,
                                                                int headDim, int heads, int kvHeads, int kvLen, float scale) {
    attention_impl<false>(q, kc, vc, mask, out, headDim, heads, kvHeads, kvLen, scale);
}
