// Decode-shaped kernels: mat-vecs laid out for bandwidth, attention split
// over the KV length, and the fused norm/quantize, swiglu/quantize, rope
// and store kernels of a decode step. They compute what ops.cu and
// quant.cu compute (the CPU backend's arithmetic, in its order where the
// result depends on it), arranged for a GPU.
#include "common.cuh"
#include "mmqact.cuh"

// f16a: a half at a 2-aligned address.
__device__ __forceinline__ float f16a(const uint8_t* p) { return __half2float(*(const __half*)p); }
__device__ __forceinline__ float f32a(const uint8_t* p) { return *(const float*)p; }

// ------------------------------------------------------------ mat-vecs
// out[t][row] = W[row] · X[t] for NT tokens, core/quant's vec-dot bit for
// bit: one warp per weight row, four rows per block of 128 threads. The
// lanes of a warp split each weight block's bytes into 4-byte words
// (consecutive lanes, consecutive words) so a warp's loads cover few cache
// lines; the block's integer sums are exact whatever the order (integer
// shuffles), and the float chain over the blocks runs in the CPU's order
// on every lane (each block's value shuffled from the lane that made it).
// A float reorder here would be tiny, but the next activation
// quantization can round it to a different int8 and so to a visible
// difference in the logits. grid (ceil(rows/4), ceil(T/NT)); the
// arguments are the matvec_* kernels' of quant.cu.

#define MV_HEAD                                                                                   \
    const int lane = threadIdx.x & 31;                                                            \
    const uint8_t* w = W + (long long)row * wrb;                                                  \
    const int nt = min(NT, ntok - t0);                                                            \
    float acc[NT];                                                                                \
    _Pragma("unroll") for (int i = 0; i < NT; i++) acc[i] = 0.f;

#define MV_TAIL                                                                                   \
    if (lane == 0) {                                                                              \
        _Pragma("unroll") for (int i = 0; i < NT; i++) if (i < nt) out[(long long)(t0 + i) * rows + row] = acc[i]; \
    }

__device__ __forceinline__ int warp_sum_i32(int v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Each warp step first issues the loads of U steps (U = 8 for one token,
// 1 for a batch), so a row's bytes are in flight together, then runs the
// integer sums and the chain.

// Q4_0 × q8_0: four lanes per block (word p of the nibbles: elements
// 4p..4p+3 and 16+4p..16+4p+3), eight blocks per step; chain
// sum += float(sumi)·(d_w·d_x).
template <int NT>
__device__ __forceinline__ void mv_q4_0(const uint8_t* __restrict__ W, const uint8_t* __restrict__ X, float* __restrict__ out, int rows, int nblk,
                                        long long wrb, long long xrb, int ntok, int t0, int row) {
    MV_HEAD
    constexpr int U = NT == 1 ? 8 : 1;
    const int g = lane >> 2, p = lane & 3;
    for (int b0 = 0; b0 < nblk; b0 += 8 * U) {
        int q[U], x0[NT][U], x1[NT][U];
        float dw[U], dx[NT][U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int b = b0 + 8 * u + g;
            const bool ok = b < nblk;
            const uint8_t* wb = w + (long long)b * 18;
            q[u] = ok ? ld32h(wb + 2 + 4 * p) : 0;
            dw[u] = ok ? f16a(wb) : 0.f;
#pragma unroll
            for (int i = 0; i < NT; i++) {
                const uint8_t* xb = X + (long long)(t0 + i) * xrb + (long long)b * 34;
                const bool in = ok && i < nt;
                x0[i][u] = in ? ld32h(xb + 2 + 4 * p) : 0;
                x1[i][u] = in ? ld32h(xb + 18 + 4 * p) : 0;
                dx[i][u] = in ? f16a(xb) : 0.f;
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int nb = min(8, nblk - (b0 + 8 * u));
            if (nb <= 0) break;
            const int qlo = q[u] & 0x0f0f0f0f, qhi = (q[u] >> 4) & 0x0f0f0f0f;
#pragma unroll
            for (int i = 0; i < NT; i++) {
                if (i < nt) {
                    int s = __dp4a(qlo, x0[i][u], __dp4a(qhi, x1[i][u], 0)) - 8 * __dp4a(0x01010101, x0[i][u], __dp4a(0x01010101, x1[i][u], 0));
                    s += __shfl_xor_sync(0xffffffffu, s, 1);
                    s += __shfl_xor_sync(0xffffffffu, s, 2);
                    const float v = __fmul_rn((float)s, __fmul_rn(dw[u], dx[i][u]));
#pragma unroll
                    for (int k = 0; k < 8; k++) {
                        const float vk = __shfl_sync(0xffffffffu, v, 4 * k);
                        if (k < nb) acc[i] = __fadd_rn(acc[i], vk);
                    }
                }
            }
        }
    }
    MV_TAIL
}

// Q8_0 × q8_0: eight lanes per block (one word each), four blocks per
// step; chain sum = fma(float(sumi), d_w·d_x, sum).
template <int NT>
__device__ __forceinline__ void mv_q8_0(const uint8_t* __restrict__ W, const uint8_t* __restrict__ X, float* __restrict__ out, int rows, int nblk,
                                        long long wrb, long long xrb, int ntok, int t0, int row) {
    MV_HEAD
    constexpr int U = NT == 1 ? 8 : 1;
    const int g = lane >> 3, p = lane & 7;
    for (int b0 = 0; b0 < nblk; b0 += 4 * U) {
        int q[U], xq[NT][U];
        float dw[U], dx[NT][U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int b = b0 + 4 * u + g;
            const bool ok = b < nblk;
            const uint8_t* wb = w + (long long)b * 34;
            q[u] = ok ? ld32h(wb + 2 + 4 * p) : 0;
            dw[u] = ok ? f16a(wb) : 0.f;
#pragma unroll
            for (int i = 0; i < NT; i++) {
                const uint8_t* xb = X + (long long)(t0 + i) * xrb + (long long)b * 34;
                const bool in = ok && i < nt;
                xq[i][u] = in ? ld32h(xb + 2 + 4 * p) : 0;
                dx[i][u] = in ? f16a(xb) : 0.f;
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int nb = min(4, nblk - (b0 + 4 * u));
            if (nb <= 0) break;
#pragma unroll
            for (int i = 0; i < NT; i++) {
                if (i < nt) {
                    int s = __dp4a(q[u], xq[i][u], 0);
                    s += __shfl_xor_sync(0xffffffffu, s, 1);
                    s += __shfl_xor_sync(0xffffffffu, s, 2);
                    s += __shfl_xor_sync(0xffffffffu, s, 4);
                    const float fs = (float)s, dd = __fmul_rn(dw[u], dx[i][u]);
#pragma unroll
                    for (int k = 0; k < 4; k++) {
                        const float sk = __shfl_sync(0xffffffffu, fs, 8 * k), dk = __shfl_sync(0xffffffffu, dd, 8 * k);
                        if (k < nb) acc[i] = fma32(sk, dk, acc[i]);
                    }
                }
            }
        }
    }
    MV_TAIL
}

// Q4_K × q8_K: a warp per block, lane l one word of the 128 nibble bytes
// (sub-blocks 2j and 2j+1, j = l/8); the mins are taken against the lane's
// own activation sums (the block's bsums are the same integers). Chain
// sum += d·float(isum) − dmin·float(summs).
template <int NT>
__device__ __forceinline__ void mv_q4_k(const uint8_t* __restrict__ W, const uint8_t* __restrict__ X, float* __restrict__ out, int rows, int nblk,
                                        long long wrb, long long xrb, int ntok, int t0, int row) {
    MV_HEAD
    constexpr int U = NT == 1 ? 8 : 1;
    const int j = lane >> 3, r = (lane & 7) * 4;
    for (int b0 = 0; b0 < nblk; b0 += U) {
        int qq[U], sc[U], x0[NT][U], x1[NT][U];
        uint32_t hd[U];
        float dx[NT][U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int b = b0 + u;
            const bool ok = b < nblk;
            const uint8_t* wb = w + (long long)b * 144;
            qq[u] = ok ? ld32a(wb + 16 + 32 * j + r) : 0;
            hd[u] = ok ? (uint32_t)ld32a(wb) : 0u;
            // the lane's scale bytes: word (lane&3) of the 12 (lanes 3, 7, ... unused)
            sc[u] = ok && (lane & 3) < 3 ? ld32a(wb + 4 + 4 * (lane & 3)) : 0;
#pragma unroll
            for (int i = 0; i < NT; i++) {
                const uint8_t* xb = X + (long long)(t0 + i) * xrb + (long long)b * 292;
                const bool in = ok && i < nt;
                x0[i][u] = in ? ld32a(xb + 4 + 64 * j + r) : 0;
                x1[i][u] = in ? ld32a(xb + 36 + 64 * j + r) : 0;
                dx[i][u] = in ? f32a(xb) : 0.f;
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (b0 + u >= nblk) break;
            // The 12 scale bytes from lanes 0..2, then scaleMinK4 of sub-blocks 2j, 2j+1.
            const uint32_t w0 = (uint32_t)__shfl_sync(0xffffffffu, sc[u], 0), w1 = (uint32_t)__shfl_sync(0xffffffffu, sc[u], 1),
                           w2 = (uint32_t)__shfl_sync(0xffffffffu, sc[u], 2);
            auto sb = [&](int k) -> int { return (int)(((k < 4 ? w0 : (k < 8 ? w1 : w2)) >> (8 * (k & 3))) & 0xffu); };
            int sc0, m0, sc1, m1;
            if (j < 2) {
                sc0 = sb(2 * j) & 63, m0 = sb(2 * j + 4) & 63;
                sc1 = sb(2 * j + 1) & 63, m1 = sb(2 * j + 5) & 63;
            } else {
                const int k0 = 2 * j, k1 = 2 * j + 1;
                sc0 = (sb(k0 + 4) & 0xf) | ((sb(k0 - 4) >> 6) << 4), m0 = (sb(k0 + 4) >> 4) | ((sb(k0) >> 6) << 4);
                sc1 = (sb(k1 + 4) & 0xf) | ((sb(k1 - 4) >> 6) << 4), m1 = (sb(k1 + 4) >> 4) | ((sb(k1) >> 6) << 4);
            }
            const float fd = __half2float(__ushort_as_half((unsigned short)(hd[u] & 0xffffu)));
            const float fdmin = __half2float(__ushort_as_half((unsigned short)(hd[u] >> 16)));
            const int qlo = qq[u] & 0x0f0f0f0f, qhi = (qq[u] >> 4) & 0x0f0f0f0f;
#pragma unroll
            for (int i = 0; i < NT; i++) {
                if (i < nt) {
                    const int is = warp_sum_i32(sc0 * __dp4a(qlo, x0[i][u], 0) + sc1 * __dp4a(qhi, x1[i][u], 0));
                    const int im = warp_sum_i32(m0 * __dp4a(0x01010101, x0[i][u], 0) + m1 * __dp4a(0x01010101, x1[i][u], 0));
                    const float d = __fmul_rn(dx[i][u], fd), dmin = __fmul_rn(dx[i][u], fdmin);
                    acc[i] = __fadd_rn(acc[i], __fsub_rn(__fmul_rn(d, (float)is), __fmul_rn(dmin, (float)im)));
                }
            }
        }
    }
    MV_TAIL
}

// Q6_K × q8_K: a warp per block. Lane l takes half h = (l/8)&1, four
// positions l4 = 4(l%8) of that half's 32, and quarters s and s+2
// (s = l/16): one word of ql, one of qh, 8 elements. Chain
// sum += (d·d_x)·float(isum).
template <int NT>
__device__ __forceinline__ void mv_q6_k(const uint8_t* __restrict__ W, const uint8_t* __restrict__ X, float* __restrict__ out, int rows, int nblk,
                                        long long wrb, long long xrb, int ntok, int t0, int row) {
    MV_HEAD
    constexpr int U = NT == 1 ? 8 : 1;
    const int s = lane >> 4, h = (lane >> 3) & 1, l4 = (lane & 7) * 4, is = l4 >> 4;
    for (int b0 = 0; b0 < nblk; b0 += U) {
        int qa[U], qh[U], sl[U], sh[U], xa[NT][U], xc[NT][U];
        float d[U], dx[NT][U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int b = b0 + u;
            const bool ok = b < nblk;
            const uint8_t* wb = w + (long long)b * 210;
            qa[u] = ok ? ld32h(wb + 64 * h + 32 * s + l4) : 0;
            qh[u] = ok ? ld32h(wb + 128 + 32 * h + l4) : 0;
            sl[u] = ok ? (int8_t)wb[192 + 8 * h + is + 2 * s] : 0;
            sh[u] = ok ? (int8_t)wb[192 + 8 * h + is + 2 * (s + 2)] : 0;
            d[u] = ok ? f16a(wb + 208) : 0.f;
#pragma unroll
            for (int i = 0; i < NT; i++) {
                const uint8_t* xb = X + (long long)(t0 + i) * xrb + (long long)b * 292;
                const bool in = ok && i < nt;
                xa[i][u] = in ? ld32a(xb + 4 + 128 * h + 32 * s + l4) : 0;
                xc[i][u] = in ? ld32a(xb + 4 + 128 * h + 32 * (s + 2) + l4) : 0;
                dx[i][u] = in ? f32a(xb) : 0.f;
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (b0 + u >= nblk) break;
            const int a = qa[u], hh = qh[u];
            const int qlo = (a & 0x0f0f0f0f) | (((hh >> (2 * s)) & 0x03030303) << 4);
            const int qhi = ((a >> 4) & 0x0f0f0f0f) | (((hh >> (2 * s + 4)) & 0x03030303) << 4);
#pragma unroll
            for (int i = 0; i < NT; i++) {
                if (i < nt) {
                    const int v = warp_sum_i32(sl[u] * (__dp4a(qlo, xa[i][u], 0) - 32 * __dp4a(0x01010101, xa[i][u], 0)) +
                                               sh[u] * (__dp4a(qhi, xc[i][u], 0) - 32 * __dp4a(0x01010101, xc[i][u], 0)));
                    acc[i] = __fadd_rn(acc[i], __fmul_rn(__fmul_rn(d[u], dx[i][u]), (float)v));
                }
            }
        }
    }
    MV_TAIL
}

#define MVF(name)                                                                                                                                   \
    extern "C" __global__ void __launch_bounds__(128) mvf_##name##_1(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk, long long wrb, \
                                                                     long long xrb, int ntok) { PDL_ENTRY();                                                    \
        const int row = blockIdx.x * 4 + (threadIdx.x >> 5);                                                                                       \
        if (row < rows) mv_##name<1>(W, X, out, rows, nblk, wrb, xrb, ntok, blockIdx.y, row);                                                      \
    }                                                                                                                                               \
    extern "C" __global__ void __launch_bounds__(128) mvf_##name##_b(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk, long long wrb, \
                                                                     long long xrb, int ntok) { PDL_ENTRY();                                                    \
        const int row = blockIdx.x * 4 + (threadIdx.x >> 5);                                                                                       \
        if (row < rows) mv_##name<8>(W, X, out, rows, nblk, wrb, xrb, ntok, blockIdx.y * 8, row);                                                  \
    }                                                                                                                                               \
    /* Up to three mat-vecs of one token over the same activations (q, k, v; gate, up) in one launch: */                                           \
    /* the grid's rows run through W0's, then W1's, then W2's.                                        */                                           \
    extern "C" __global__ void __launch_bounds__(128) mvf_##name##_m(const uint8_t* W0, const uint8_t* W1, const uint8_t* W2, float* o0, float* o1,   \
                                                                     float* o2, int r0, int r1, int r2, int nblk, long long wrb, const uint8_t* X) { PDL_ENTRY(); \
        int r = blockIdx.x * 4 + (threadIdx.x >> 5);                                                                                               \
        const uint8_t* W = W0;                                                                                                                      \
        float* o = o0;                                                                                                                              \
        int rows = r0;                                                                                                                              \
        if (r >= r0) {                                                                                                                              \
            r -= r0, W = W1, o = o1, rows = r1;                                                                                                     \
            if (r >= r1) {                                                                                                                          \
                r -= r1, W = W2, o = o2, rows = r2;                                                                                                 \
                if (r >= r2) return;                                                                                                                \
            }                                                                                                                                       \
        }                                                                                                                                           \
        mv_##name<1>(W, X, o, rows, nblk, wrb, 0, 1, 0, r);                                                                                        \
    }
MVF(q4_0) MVF(q8_0) MVF(q4_k) MVF(q6_k)

// ------------------------------------------------ staged mat-vecs (v2)
// The mvs_* kernels compute exactly what the mvf_* ones do (the same
// per-block integer sums and the same float chain over a row's blocks),
// but from shared memory: each warp first copies its weight row(s) there
// with 16-byte cp.async loads (whole rows in flight at once), the block's
// threads copy the activation row(s) once for all its rows, and only then
// do the lanes run the 16- and 32-bit reads of the 18-, 34-, 144- and
// 210-byte blocks, which from global memory cost several L1 wavefronts per
// useful word. Blocks of MVS_ROWS warps (32·MVS_ROWS threads) for a
// batch; the one-token _1, _m and tail kernels take their warp
// count from the block (1 to MVS_ROWS: matvec.go's mvsWarps); a warp
// takes MVS_RPW_* rows of one token (mvs_row below; Q4_K and Q6_K with
// their own lane layouts, which cost fewer instructions than mv_*'s) or
// one row of a batch (the mv_* bodies). The dynamic shared memory is the
// block's rows of wrb bytes, then the activations (decode.go's
// stagedShared). The caller guarantees 16-byte alignment of the weights,
// the row length wrb and the activations (and, for the batch, xrb), and
// that the 16-byte round-up of one token's activations stays inside the
// buffer (the workspace).
#define MVS_ROWS 8

__device__ __forceinline__ void cp_async16(uint8_t* s, const uint8_t* g) {
    const unsigned sa = (unsigned)__cvta_generic_to_shared(s);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa), "l"(g) : "memory");
}
// prefetch_l2: the 128-byte line at p into L2.
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
// stage16 issues the copy of n bytes (a multiple of 16) from g to s by the
// threads tid = 0..step-1 of a group, all loads before any wait.
__device__ __forceinline__ void stage16(uint8_t* s, const uint8_t* g, long long n, int tid, int step) {
    for (long long k = 16LL * tid; k < n; k += 16LL * step) cp_async16(s + k, g + k);
}
__device__ __forceinline__ long long round16(long long n) { return (n + 15) & ~15LL; }

// mvs_q4_k_row: one token's Q4_K row from shared memory, what
// mv_q4_k<1> computes with a quarter of its instructions. Lane (k, j) =
// (lane/8, lane%8) takes sub-block j of block b0+k: the 32 nibbles
// j&1 of qs bytes 32(j/2)..32(j/2)+31 (two 16-byte reads) against
// activations 32j..32j+31, times the sub-block's scale, and their sum
// times its min; three xor shuffles over the eight lanes of a block give
// the block's isum and min sum (the same integers mv_q4_k's whole-warp
// sums make), every lane of the group then makes the block's value with
// mv_q4_k's float operations, and the chain adds blocks b0..b0+3 in order.
// mvs_q4_k_step: the step of mvs_q4_k_row over blocks b0..b0+7 (w: block
// b0's bytes), its chain continued in acc.
__device__ __forceinline__ void mvs_q4_k_step(const uint8_t* w, const uint8_t* X, int b0, int nblk, float& acc) {
    const int lane = threadIdx.x & 31, k = lane >> 3, j = lane & 7, sh = 4 * (j & 1);
    {
        float v[2];
#pragma unroll
        for (int u = 0; u < 2; u++) {
            const int b = b0 + 4 * u + k;
            int is = 0, im = 0;
            float fd = 0.f, fdmin = 0.f, dx = 0.f;
            if (b < nblk) {
                const uint8_t* wb = w + (long long)(4 * u + k) * 144;
                const uint8_t* xb = X + (long long)b * 292;
                const uint4 qa = *(const uint4*)(wb + 16 + 32 * (j >> 1));
                const uint4 qb = *(const uint4*)(wb + 32 + 32 * (j >> 1));
                const uint32_t qw[8] = {qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w};
                const int* xs = (const int*)(xb + 4 + 32 * j);
                int sq = 0, sx = 0;
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    const int xi = xs[i];
                    sq = __dp4a((int)((qw[i] >> sh) & 0x0f0f0f0fu), xi, sq);
                    sx = __dp4a(0x01010101, xi, sx);
                }
                int sc, m;
                scale_min_k4(j, wb + 4, &sc, &m);
                is = sc * sq, im = m * sx;
                fd = f16a(wb), fdmin = f16a(wb + 2), dx = f32a(xb);
            }
#pragma unroll
            for (int x = 1; x < 8; x <<= 1) {
                is += __shfl_xor_sync(0xffffffffu, is, x);
                im += __shfl_xor_sync(0xffffffffu, im, x);
            }
            const float d = __fmul_rn(dx, fd), dmin = __fmul_rn(dx, fdmin);
            v[u] = __fsub_rn(__fmul_rn(d, (float)is), __fmul_rn(dmin, (float)im));
        }
#pragma unroll
        for (int u = 0; u < 2; u++) {
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                const float vk = __shfl_sync(0xffffffffu, v[u], 8 * kk);
                if (b0 + 4 * u + kk < nblk) acc = __fadd_rn(acc, vk);
            }
        }
    }
}
__device__ __forceinline__ void mvs_q4_k_row(const uint8_t* w, const uint8_t* X, float* o, int nblk) {
    float acc = 0.f;
    for (int b0 = 0; b0 < nblk; b0 += 8) mvs_q4_k_step(w + (long long)b0 * 144, X, b0, nblk, acc);
    if ((threadIdx.x & 31) == 0) *o = acc;
}

// mvs_q6_k_row: one token's Q6_K row from shared memory, what
// mv_q6_k<1> computes with fewer instructions. Lane (k, j) = (lane/8,
// lane%8) takes, of block b0+k, half h = j/4 and the 32 elements of
// group g = s + 2·(j&1) (s = (j/2)&1) of that half: nibble j&1 of ql
// bytes 64h+32s.., bits 2g, 2g+1 of qh bytes 32h.., activations
// 128h+32g.., and the scales of its two 16-element sub-blocks; three xor
// shuffles over the eight lanes of a block give the block's integer sum
// (the same integer mv_q6_k's whole-warp sum makes), then mv_q6_k's float
// operations and the chain over blocks b0..b0+3 in order.
// mvs_q6_k_step: the step of mvs_q6_k_row over blocks b0..b0+7 (w: block
// b0's bytes), its chain continued in acc.
__device__ __forceinline__ void mvs_q6_k_step(const uint8_t* w, const uint8_t* X, int b0, int nblk, float& acc) {
    const int lane = threadIdx.x & 31, k = lane >> 3, j = lane & 7;
    const int h = j >> 2, s = (j >> 1) & 1, nib = j & 1, g = s + 2 * nib;
    {
        float v[2];
#pragma unroll
        for (int u = 0; u < 2; u++) {
            const int b = b0 + 4 * u + k;
            int is = 0;
            float d = 0.f, dx = 0.f;
            if (b < nblk) {
                const uint8_t* wb = w + (long long)(4 * u + k) * 210;
                const uint8_t* xb = X + (long long)b * 292;
                const uint8_t* ql = wb + 64 * h + 32 * s;
                const uint8_t* qh = wb + 128 + 32 * h;
                const int* xs = (const int*)(xb + 4 + 128 * h + 32 * g);
                int sq[2] = {0, 0}, sx[2] = {0, 0};
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    const uint32_t a = (uint32_t)ld32h(ql + 4 * i), hh = (uint32_t)ld32h(qh + 4 * i);
                    const int q = (int)(((a >> (4 * nib)) & 0x0f0f0f0fu) | (((hh >> (2 * g)) & 0x03030303u) << 4));
                    const int xi = xs[i];
                    sq[i >> 2] = __dp4a(q, xi, sq[i >> 2]);
                    sx[i >> 2] = __dp4a(0x01010101, xi, sx[i >> 2]);
                }
                const int sa = (int8_t)wb[192 + 8 * h + 2 * g], sb = (int8_t)wb[192 + 8 * h + 2 * g + 1];
                is = sa * (sq[0] - 32 * sx[0]) + sb * (sq[1] - 32 * sx[1]);
                d = f16a(wb + 208), dx = f32a(xb);
            }
#pragma unroll
            for (int x = 1; x < 8; x <<= 1) is += __shfl_xor_sync(0xffffffffu, is, x);
            v[u] = __fmul_rn(__fmul_rn(d, dx), (float)is);
        }
#pragma unroll
        for (int u = 0; u < 2; u++) {
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                const float vk = __shfl_sync(0xffffffffu, v[u], 8 * kk);
                if (b0 + 4 * u + kk < nblk) acc = __fadd_rn(acc, vk);
            }
        }
    }
}
__device__ __forceinline__ void mvs_q6_k_row(const uint8_t* w, const uint8_t* X, float* o, int nblk) {
    float acc = 0.f;
    for (int b0 = 0; b0 < nblk; b0 += 8) mvs_q6_k_step(w + (long long)b0 * 210, X, b0, nblk, acc);
    if ((threadIdx.x & 31) == 0) *o = acc;
}

// mvs_q4_0_2: one token's Q4_0 rows from shared memory, two per warp:
// mv_q4_0<1>'s lanes (four per block, word p of the nibbles) with the
// half-warps on two rows, four blocks a row per step, so each shuffle of
// the chain serves both rows. The integers and the float chain are
// mv_q4_0's. w is the lane's row (live false: a row past the end, whose
// lanes still take part in the shuffles), o its output.
__device__ __forceinline__ void mvs_q4_0_2(const uint8_t* w, const uint8_t* X, float* o, bool live, int nblk) {
    const int lane = threadIdx.x & 31, half = lane & 16, g = (lane >> 2) & 3, p = lane & 3;
    constexpr int U = 8;
    float acc = 0.f;
    for (int b0 = 0; b0 < nblk; b0 += 4 * U) {
        int q[U], x0[U], x1[U];
        float dw[U], dx[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int b = b0 + 4 * u + g;
            const bool ok = live && b < nblk;
            const uint8_t* wb = w + (long long)b * 18;
            const uint8_t* xb = X + (long long)b * 34;
            q[u] = ok ? ld32h(wb + 2 + 4 * p) : 0;
            dw[u] = ok ? f16a(wb) : 0.f;
            x0[u] = ok ? ld32h(xb + 2 + 4 * p) : 0;
            x1[u] = ok ? ld32h(xb + 18 + 4 * p) : 0;
            dx[u] = ok ? f16a(xb) : 0.f;
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int nb = min(4, nblk - (b0 + 4 * u));
            if (nb <= 0) break;
            const int qlo = q[u] & 0x0f0f0f0f, qhi = (q[u] >> 4) & 0x0f0f0f0f;
            int s = __dp4a(qlo, x0[u], __dp4a(qhi, x1[u], 0)) - 8 * __dp4a(0x01010101, x0[u], __dp4a(0x01010101, x1[u], 0));
            s += __shfl_xor_sync(0xffffffffu, s, 1);
            s += __shfl_xor_sync(0xffffffffu, s, 2);
            const float v = __fmul_rn((float)s, __fmul_rn(dw[u], dx[u]));
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const float vk = __shfl_sync(0xffffffffu, v, half + 4 * k);
                if (k < nb) acc = __fadd_rn(acc, vk);
            }
        }
    }
    if ((lane & 15) == 0 && live) *o = acc;
}

// mvs_row: one token's row from shared memory for the staged kernels
// (live: the row exists, the same on all of a row's lanes): mvs_q4_0_2
// (two rows a warp), mvs_q4_k_row, mvs_q6_k_row, and the mv_q8_0 body.
// MVS_RPW_*: rows per warp (decode.go's stagedMatVec rpw).
#define MVS_RPW_q4_0 2
#define MVS_RPW_q8_0 1
#define MVS_RPW_q4_k 1
#define MVS_RPW_q6_k 1
#define MVS_ROW_q4_0(ws, xs, o, live, rows, nblk, wrb, xrb) mvs_q4_0_2(ws, xs, o, live, nblk)
#define MVS_ROW_q8_0(ws, xs, o, live, rows, nblk, wrb, xrb) \
    if (live) mv_q8_0<1>(ws, xs, o, rows, nblk, wrb, xrb, 1, 0, 0)
#define MVS_ROW_q4_k(ws, xs, o, live, rows, nblk, wrb, xrb) \
    if (live) mvs_q4_k_row(ws, xs, o, nblk)
#define MVS_ROW_q6_k(ws, xs, o, live, rows, nblk, wrb, xrb) \
    if (live) mvs_q6_k_row(ws, xs, o, nblk)

#define MVS(name)                                                                                                                                   \
    extern "C" __global__ void __launch_bounds__(32 * MVS_ROWS) mvs_##name##_1(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk,    \
                                                                                long long wrb, long long xrb, int ntok) {                                        \
        extern __shared__ __align__(16) uint8_t mvs_sh[]; \
        constexpr int RPW = MVS_RPW_##name, L = 32 / RPW; \
        const int nw = blockDim.x >> 5; \
        const int lane = threadIdx.x & 31, slot = (threadIdx.x >> 5) * RPW + lane / L, row = blockIdx.x * (nw * RPW) + slot; \
        uint8_t* ws = mvs_sh + slot * wrb; \
        uint8_t* xs = mvs_sh + nw * RPW * wrb; \
        const bool live = row < rows; \
        if (live) stage16(ws, W + (long long)row * wrb, wrb, lane % L, L); \
        PDL_ENTRY(); /* the weights' copies in flight */ \
        stage16(xs, X, round16(xrb), threadIdx.x, blockDim.x); \
        cp_async_wait_all(); \
        __syncthreads(); \
        MVS_ROW_##name(ws, xs, out + row, live, rows, nblk, wrb, xrb); \
    }                                                                                                                                               \
    /* eight tokens per grid row (blockIdx.y), their activation rows staged together. */                                                          \
    extern "C" __global__ void __launch_bounds__(32 * MVS_ROWS) mvs_##name##_b(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk,    \
                                                                                long long wrb, long long xrb, int ntok) {                                        \
        extern __shared__ __align__(16) uint8_t mvs_sh[];                                                                                           \
        const int wi = threadIdx.x >> 5, row = blockIdx.x * MVS_ROWS + wi, t0 = blockIdx.y * 8, nt = min(8, ntok - t0);                           \
        uint8_t* ws = mvs_sh + wi * wrb;                                                                                                            \
        uint8_t* xs = mvs_sh + MVS_ROWS * wrb;                                                                                                      \
        if (row < rows) stage16(ws, W + (long long)row * wrb, wrb, threadIdx.x & 31, 32);                                                          \
        PDL_ENTRY(); /* the weights' copies in flight */                                                                                            \
        stage16(xs, X + (long long)t0 * xrb, (long long)nt * xrb, threadIdx.x, blockDim.x);                                                         \
        cp_async_wait_all();                                                                                                                        \
        __syncthreads();                                                                                                                            \
        if (row < rows) mv_##name<8>(ws, xs, out + (long long)t0 * rows + row, rows, nblk, wrb, xrb, nt, 0, 0);                                   \
    }                                                                                                                                               \
    /* mvf_*_m staged: the grid's rows run through W0's, W1's, W2's; a block may straddle two weights. */                                         \
    extern "C" __global__ void __launch_bounds__(32 * MVS_ROWS) mvs_##name##_m(const uint8_t* W0, const uint8_t* W1, const uint8_t* W2, float* o0,    \
                                                                                float* o1, float* o2, int r0, int r1, int r2, int nblk,             \
                                                                                long long wrb, const uint8_t* X, long long xrb) {                                 \
        extern __shared__ __align__(16) uint8_t mvs_sh[];                                                                                           \
        constexpr int RPW = MVS_RPW_##name, L = 32 / RPW; \
        const int nw = blockDim.x >> 5; \
        const int lane = threadIdx.x & 31, slot = (threadIdx.x >> 5) * RPW + lane / L; \
        int r = blockIdx.x * (nw * RPW) + slot; \
        const uint8_t* W = W0;                                                                                                                      \
        float* o = o0;                                                                                                                              \
        int rows = r0;                                                                                                                              \
        if (r >= r0) {                                                                                                                              \
            r -= r0, W = W1, o = o1, rows = r1;                                                                                                     \
            if (r >= r1) r -= r1, W = W2, o = o2, rows = r2;                                                                                        \
        }                                                                                                                                           \
        const bool live = r < rows; \
        uint8_t* ws = mvs_sh + slot * wrb; \
        uint8_t* xs = mvs_sh + nw * RPW * wrb; \
        if (live) stage16(ws, W + (long long)r * wrb, wrb, lane % L, L); \
        PDL_ENTRY(); /* the weights' copies in flight */ \
        stage16(xs, X, round16(xrb), threadIdx.x, blockDim.x); \
        cp_async_wait_all(); \
        __syncthreads(); \
        MVS_ROW_##name(ws, xs, o + r, live, rows, nblk, wrb, xrb); \
    }
MVS(q4_0) MVS(q8_0) MVS(q4_k) MVS(q6_k)

// ------------------------------------------- pipelined mat-vecs (long rows)
// mvp_q4_k_1, mvp_q6_k_1: mvs_*_1 for rows of many blocks, whose whole
// rows in shared memory would leave an SM one or two blocks that copy and
// then compute in lockstep. Each warp streams its row through a ring of
// MVP_S chunks of eight blocks (one mvs_*_step each): MVP_S−1 chunks in
// flight while it computes one, so the copies run on during the sums. The
// steps, and so the values, are mvs_*_row's. Dynamic shared memory: the
// activations (16-byte rounded), then each warp's ring (matvec.go's
// pipedShared). Rows of a multiple of 16 bytes (a Q6_K row is then a
// whole number of chunks; a Q4_K row's last chunk may be short).
#define MVP_S 4

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

#define MVP(name, BS)                                                                                                                               \
    extern "C" __global__ void __launch_bounds__(32 * MVS_ROWS) mvp_##name##_1(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk,    \
                                                                                long long wrb, long long xrb, int ntok) {                                        \
        extern __shared__ __align__(16) uint8_t mvs_sh[];                                                                                           \
        constexpr int CH = 8 * BS;                                                                                                                  \
        const int nw = blockDim.x >> 5, lane = threadIdx.x & 31, wi = threadIdx.x >> 5, row = blockIdx.x * nw + wi;                                \
        uint8_t* xs = mvs_sh;                                                                                                                       \
        uint8_t* ring = mvs_sh + round16(xrb) + (long long)wi * (MVP_S * CH);                                                                       \
        const bool live = row < rows;                                                                                                               \
        const uint8_t* Wr = W + (long long)row * wrb;                                                                                               \
        const int nch = (nblk + 7) / 8;                                                                                                             \
        _Pragma("unroll") for (int c = 0; c < MVP_S - 1; c++) {                                                                                     \
            if (live && c < nch) stage16(ring + c * CH, Wr + (long long)c * CH, min((long long)CH, wrb - (long long)c * CH), lane, 32);             \
            cp_async_commit();                                                                                                                      \
        }                                                                                                                                           \
        PDL_ENTRY(); /* the first chunks' copies in flight */                                                                                       \
        stage16(xs, X, round16(xrb), threadIdx.x, blockDim.x);                                                                                      \
        cp_async_wait_all(); /* the activations and the first chunks */                                                                             \
        __syncthreads();                                                                                                                            \
        if (!live) return;                                                                                                                          \
        float acc = 0.f;                                                                                                                            \
        for (int c = 0; c < nch; c++) {                                                                                                             \
            const int cn = c + MVP_S - 1;                                                                                                           \
            if (cn < nch) stage16(ring + (cn % MVP_S) * CH, Wr + (long long)cn * CH, min((long long)CH, wrb - (long long)cn * CH), lane, 32);      \
            cp_async_commit();                                                                                                                      \
            cp_async_wait_group<MVP_S - 1>(); /* chunk c */                                                                                         \
            __syncwarp();                                                                                                                           \
            mvs_##name##_step(ring + (c % MVP_S) * CH, xs, 8 * c, nblk, acc);                                                                      \
            __syncwarp(); /* before its slot is copied over */                                                                                      \
        }                                                                                                                                           \
        if (lane == 0) out[row] = acc;                                                                                                              \
    }
MVP(q4_k, 144) MVP(q6_k, 210)

// ------------------------------------------------ split mat-vecs (long rows)
// mvk_q4_k_1, mvk_q6_k_1: one token's mat-vec over long K-quant rows with
// each row's blocks split across the warps of a block: a block takes MVK_R
// rows, its warp w slices s = w, w+nw, ... of eight blocks of each (nw:
// the block's warps, ceil(nblk/8) for one slice a warp). A warp copies
// exactly the bytes it reads (its slice of each of the rows, one cp.async
// group a row, all in flight before the first wait), so it waits on its
// own copies and a __syncwarp, never on the block. Its slice's
// activations go to registers once (plain loads after the PDL wait: the L1
// keeps the row for the SM's next blocks, the weights' cp.async.cg copies
// bypass it) and serve all the block's rows.
// Four lanes a block (lane (kb, jp) = (lane/4, lane%4), block 8s+kb); the
// block's integer sums (the integers mvs_*_step's eight lanes make,
// grouped otherwise) come from two xor shuffles over its four lanes, then
// lane jp = 0 makes the block's value v_b with mvs_*_step's float
// operations and keeps it in shared memory. After a barrier, thread r of
// the block runs row r's chain acc = 0 + v_0 + v_1 + ... in block order,
// mvs_*_row's. Dynamic shared memory: the warps' slices (nw · MVK_R ·
// 8 · block bytes), then MVK_R · nblk floats (matvec.go's splitShared).
// Rows and weights 16-byte aligned (for Q6_K: rows of a multiple of eight
// blocks, so every slice is whole). mvk_*_1r2 and mvk_*_1r8 take two and
// eight rows a block (the launches take two: matvec.go's defaultSplitRows;
// MINFER_CUDA_MVK_ROWS picks, for comparisons).
#define MVK_R 4

// mvk_q4k: the Q4_K lane. Lane jp takes qs bytes 32jp..32jp+31 — the lo
// nibbles sub-block 2jp, the hi ones sub-block 2jp+1 — against their 64
// activations: isum Σ sc·Σq·x and min sum Σ m·Σx over its two sub-blocks.
struct mvk_q4k {
    static constexpr int BS = 144;
    int xa[16];
    int sx0, sx1;
    float dx;
    __device__ __forceinline__ void acts(const uint8_t* X, int b, bool ok, int jp) {
        sx0 = 0, sx1 = 0, dx = 0.f;
        if (ok) {
            const uint8_t* xb = X + (long long)b * 292;
            const int* xp = (const int*)(xb + 4 + 64 * jp);
#pragma unroll
            for (int i = 0; i < 16; i++) xa[i] = xp[i];
            dx = f32a(xb);
#pragma unroll
            for (int i = 0; i < 8; i++) {
                sx0 = __dp4a(0x01010101, xa[i], sx0);
                sx1 = __dp4a(0x01010101, xa[8 + i], sx1);
            }
        } else {
#pragma unroll
            for (int i = 0; i < 16; i++) xa[i] = 0;
        }
    }
    // row: the block's value (on lane jp = 0) from its bytes at wb.
    __device__ __forceinline__ float row(const uint8_t* wb, bool ok, int jp) const {
        int is = 0, im = 0;
        uint32_t hd = 0;
        if (ok) {
            const int h = jp & 1;
            const uint4 hs = *(const uint4*)wb;
            const uint4 qa = *(const uint4*)(wb + 16 + 32 * jp);
            const uint4 qb = *(const uint4*)(wb + 32 + 32 * jp);
            const uint32_t qw[8] = {qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w};
            int s0 = 0, s1 = 0;
#pragma unroll
            for (int i = 0; i < 8; i++) {
                s0 = __dp4a((int)(qw[i] & 0x0f0f0f0fu), xa[i], s0);
                s1 = __dp4a((int)((qw[i] >> 4) & 0x0f0f0f0fu), xa[8 + i], s1);
            }
            // scale_min_k4 of sub-blocks 2jp and 2jp+1, two bytes at a time: A = scale
            // bytes 2h, 2h+1, B = 4+2h, 5+2h, C = 8+2h, 9+2h (h = jp&1).
            const uint32_t A = (hs.y >> (16 * h)) & 0xffffu, B = (hs.z >> (16 * h)) & 0xffffu, C = (hs.w >> (16 * h)) & 0xffffu;
            const uint32_t scp = jp < 2 ? (A & 0x3f3fu) : ((C & 0x0f0fu) | ((A >> 2) & 0x3030u));
            const uint32_t mp = jp < 2 ? (B & 0x3f3fu) : (((C >> 4) & 0x0f0fu) | ((B >> 2) & 0x3030u));
            is = (int)(scp & 0xffu) * s0 + (int)(scp >> 8) * s1;
            im = (int)(mp & 0xffu) * sx0 + (int)(mp >> 8) * sx1;
            hd = hs.x;
        }
        is += __shfl_xor_sync(0xffffffffu, is, 1);
        im += __shfl_xor_sync(0xffffffffu, im, 1);
        is += __shfl_xor_sync(0xffffffffu, is, 2);
        im += __shfl_xor_sync(0xffffffffu, im, 2);
        const float fd = __half2float(__ushort_as_half((unsigned short)(hd & 0xffffu)));
        const float fdmin = __half2float(__ushort_as_half((unsigned short)(hd >> 16)));
        const float d = __fmul_rn(dx, fd), dmin = __fmul_rn(dx, fdmin);
        return __fsub_rn(__fmul_rn(d, (float)is), __fmul_rn(dmin, (float)im));
    }
};

// mvk_ld8: eight words from a 2-aligned address p (four-aligned loads and
// funnel shifts).
__device__ __forceinline__ void mvk_ld8(const uint8_t* p, uint32_t* w) {
    const uint32_t* a = (const uint32_t*)((uintptr_t)p & ~(uintptr_t)3);
    const int sh = 8 * (int)((uintptr_t)p & 3);
    uint32_t t[9];
#pragma unroll
    for (int i = 0; i < 9; i++) t[i] = a[i];
#pragma unroll
    for (int i = 0; i < 8; i++) w[i] = __funnelshift_r(t[i], t[i + 1], sh);
}

// mvk_q6k: the Q6_K lane. Lane jp = (hf, s) = (jp/2, jp%2) takes ql bytes
// 64hf+32s..+31 (lo nibbles: group s of half hf, hi nibbles: group s+2),
// their qh bits (qh bytes 32hf.., bits 2g, 2g+1 of group g) and the four
// scales of the two groups' 16-element sub-blocks against their 64
// activations: isum Σ sc·(Σq·x − 32·Σx) over the four sub-blocks.
struct mvk_q6k {
    static constexpr int BS = 210;
    int xa[16];
    int bx[4]; // 32·Σx of the four sub-blocks
    float dx;
    __device__ __forceinline__ void acts(const uint8_t* X, int b, bool ok, int jp) {
        dx = 0.f;
#pragma unroll
        for (int k = 0; k < 4; k++) bx[k] = 0;
        if (ok) {
            const uint8_t* xb = X + (long long)b * 292;
            const int hf = jp >> 1, s = jp & 1;
            const int* x0 = (const int*)(xb + 4 + 128 * hf + 32 * s);
            const int* x1 = (const int*)(xb + 4 + 128 * hf + 32 * (s + 2));
#pragma unroll
            for (int i = 0; i < 8; i++) xa[i] = x0[i], xa[8 + i] = x1[i];
            dx = f32a(xb);
            int sx[4] = {0, 0, 0, 0};
#pragma unroll
            for (int i = 0; i < 16; i++) sx[i >> 2] = __dp4a(0x01010101, xa[i], sx[i >> 2]);
#pragma unroll
            for (int k = 0; k < 4; k++) bx[k] = 32 * sx[k];
        } else {
#pragma unroll
            for (int i = 0; i < 16; i++) xa[i] = 0;
        }
    }
    __device__ __forceinline__ float row(const uint8_t* wb, bool ok, int jp) const {
        int is = 0;
        float d = 0.f;
        if (ok) {
            const int hf = jp >> 1, s = jp & 1;
            uint32_t ql[8], qh[8];
            mvk_ld8(wb + 64 * hf + 32 * s, ql);
            mvk_ld8(wb + 128 + 32 * hf, qh);
            int sq[4] = {0, 0, 0, 0};
#pragma unroll
            for (int i = 0; i < 8; i++) {
                // group s: lo nibbles, qh bits 2s, 2s+1; group s+2: hi nibbles, bits 2s+4, 2s+5
                const int q0 = (int)((ql[i] & 0x0f0f0f0fu) | ((qh[i] << (4 - 2 * s)) & 0x30303030u));
                const int q1 = (int)(((ql[i] >> 4) & 0x0f0f0f0fu) | ((qh[i] >> (2 * s)) & 0x30303030u));
                sq[i >> 2] = __dp4a(q0, xa[i], sq[i >> 2]);
                sq[2 + (i >> 2)] = __dp4a(q1, xa[8 + i], sq[2 + (i >> 2)]);
            }
            const int8_t* sc = (const int8_t*)(wb + 192 + 8 * hf + 2 * s);
            is = sc[0] * (sq[0] - bx[0]) + sc[1] * (sq[1] - bx[1]) + sc[4] * (sq[2] - bx[2]) + sc[5] * (sq[3] - bx[3]);
            d = f16a(wb + 208);
        }
        is += __shfl_xor_sync(0xffffffffu, is, 1);
        is += __shfl_xor_sync(0xffffffffu, is, 2);
        return __fmul_rn(__fmul_rn(d, dx), (float)is);
    }
};

// mvk_issue: a warp's copies of slice s of the block's nr rows (row r to
// sl + r·8·BS), one cp.async group a row (R groups, empty ones past nr).
template <int BS, int R>
__device__ __forceinline__ void mvk_issue(uint8_t* sl, const uint8_t* W, int row0, int nr, int s, int nblk, long long wrb, int lane) {
    constexpr int CH = 8 * BS, P = (CH / 16 + 31) / 32;
    const int len = min(CH, (nblk - 8 * s) * BS);
    const uint8_t* g = W + (long long)row0 * wrb + (long long)s * CH;
#pragma unroll
    for (int r = 0; r < R; r++) {
#pragma unroll
        for (int k = 0; k < P; k++) {
            const int o = 16 * (lane + 32 * k);
            if (r < nr && o < len) cp_async16(sl + r * CH + o, g + r * wrb + o);
        }
        cp_async_commit();
    }
}

template <class T, int R>
__device__ __forceinline__ void mvk_1(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk, long long wrb) {
    extern __shared__ __align__(16) uint8_t mvk_sh[];
    constexpr int CH = 8 * T::BS;
    static_assert(R >= 1 && R <= 8, "the waits below take up to eight groups");
    const int nw = blockDim.x >> 5, lane = threadIdx.x & 31, wi = threadIdx.x >> 5;
    const int row0 = blockIdx.x * R, nr = min(R, rows - row0), nsl = (nblk + 7) >> 3;
    const int kb = lane >> 2, jp = lane & 3;
    uint8_t* sl = mvk_sh + (long long)wi * (R * CH);
    float* vs = (float*)(mvk_sh + (long long)nw * (R * CH));
    if (wi < nsl) mvk_issue<T::BS, R>(sl, W, row0, nr, wi, nblk, wrb, lane);
    PDL_ENTRY(); /* the first slice's copies in flight */
    for (int s = wi; s < nsl; s += nw) {
        if (s != wi) {
            __syncwarp(); /* the last slice's reads done before its bytes are copied over */
            mvk_issue<T::BS, R>(sl, W, row0, nr, s, nblk, wrb, lane);
        }
        const int b = 8 * s + kb;
        const bool ok = b < nblk;
        T t;
        t.acts(X, b, ok, jp);
#pragma unroll
        for (int r = 0; r < R; r++) {
            // row r's copies (group r of the slice's R) done, then everyone's in the warp
            switch (R - 1 - r) {
            case 0: cp_async_wait_group<0>(); break;
            case 1: cp_async_wait_group<1>(); break;
            case 2: cp_async_wait_group<2>(); break;
            case 3: cp_async_wait_group<3>(); break;
            case 4: cp_async_wait_group<4>(); break;
            case 5: cp_async_wait_group<5>(); break;
            case 6: cp_async_wait_group<6>(); break;
            default: cp_async_wait_group<7>(); break;
            }
            __syncwarp();
            if (r >= nr) break;
            const float v = t.row(sl + r * CH + kb * T::BS, ok, jp);
            if (ok && jp == 0) vs[r * nblk + b] = v;
        }
    }
    __syncthreads(); /* every block's value of every row */
    if ((int)threadIdx.x < nr) {
        const float* v = vs + threadIdx.x * nblk;
        float acc = 0.f;
        for (int b = 0; b < nblk; b++) acc = __fadd_rn(acc, v[b]);
        out[row0 + threadIdx.x] = acc;
    }
}

#define MVK(name, T, LB)                                                                                                                            \
    extern "C" __global__ void __launch_bounds__(256, LB) mvk_##name##_1(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk,        \
                                                                         long long wrb, long long xrb, int ntok) {                                 \
        mvk_1<T, MVK_R>(W, X, out, rows, nblk, wrb);                                                                                             \
    }                                                                                                                                            \
    extern "C" __global__ void __launch_bounds__(256, LB) mvk_##name##_1r2(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk,      \
                                                                           long long wrb, long long xrb, int ntok) {                               \
        mvk_1<T, 2>(W, X, out, rows, nblk, wrb);                                                                                                 \
    }                                                                                                                                            \
    extern "C" __global__ void __launch_bounds__(256, LB) mvk_##name##_1r8(const uint8_t* W, const uint8_t* X, float* out, int rows, int nblk,      \
                                                                           long long wrb, long long xrb, int ntok) {                               \
        mvk_1<T, 8>(W, X, out, rows, nblk, wrb);                                                                                                 \
    }
// Blocks an SM by registers at eight warps: six for Q4_K (40 registers),
// four for Q6_K (63; its 47 KB of slices allow four anyway).
MVK(q4_k, mvk_q4k, 6) MVK(q6_k, mvk_q6k, 4)

// ------------------------------------------------- activation quantizers
// The quantizers of quant.cu on values already in registers: a warp holds
// one 32-element q8_0/q8_1 block, a block of 256 threads one q8_K block.

__device__ __forceinline__ void q8_0_warp(float v, uint8_t* b, int lane) {
    float amax = warp_max(fabsf(v));
    float id = amax != 0.f ? 127.f / amax : 0.f;
    b[2 + lane] = (uint8_t)(int8_t)sat8(v * id);
    if (lane == 0) put_f16(b, amax / 127.f);
}
__device__ __forceinline__ void q8_1_warp(float v, uint8_t* b, int lane) {
    float amax = warp_max(fabsf(v));
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
// q8k_sh: the shared scratch of q8k_block.
struct q8k_sh {
    float v[256];
    float a[8];
    int i[8];
    int bs[16];
};
// q8k_block: quantize_row_q8_K_ref over the 256 values of each group of
// 256 threads (every thread of the block calls it; sh is the group's
// scratch, valid whether the group's block exists). The extreme is the
// first element of largest magnitude.
__device__ void q8k_block(float v, uint8_t* b, q8k_sh* sh, bool valid) {
    int t = threadIdx.x & 255, lane = t & 31, w = t >> 5;
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
    if (valid) b[4 + t] = (uint8_t)(int8_t)q;
    int s = q;
    for (int o = 8; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((t & 15) == 0) sh->bs[t >> 4] = s;
    __syncthreads();
    if (valid && t < 16) {
        int16_t bs = (int16_t)sh->bs[t];
        b[260 + 2 * t] = (uint16_t)bs & 0xff;
        b[261 + 2 * t] = (uint16_t)bs >> 8;
    }
    if (valid && t == 0) {
        uint32_t d = amax != 0.f ? __float_as_uint(1.f / iscale) : 0u;
        b[0] = d & 0xff;
        b[1] = (d >> 8) & 0xff;
        b[2] = (d >> 16) & 0xff;
        b[3] = d >> 24;
    }
    __syncthreads(); // the scratch is reused by the caller's next block
}

enum { QT_NONE = 0, QT_Q8_0 = 1, QT_Q8_1 = 2, QT_Q8_K = 3 };
// norm_quant's other targets: the tensor-core mat-mul's layout (mmqact.cuh)
// of q8_0, q8_1 or q8_K activations.
enum { QT_MMQ_Q8_0 = 4, QT_MMQ_Q8_1 = 5, QT_MMQ_Q8_K = 6 };

// quantize_at: value v of element i (the thread's; the callers step so a
// warp holds whole q8_0/q8_1 blocks and a 256-thread block whole q8_K
// blocks) into row r's activation blocks at q.
__device__ __forceinline__ void quantize_at(int qt, float v, uint8_t* q, long long xrb, long long r, int e, bool warpIn, q8k_sh* sh, bool groupIn) {
    uint8_t* row = q + r * xrb;
    int lane = threadIdx.x & 31;
    if (qt == QT_Q8_0) {
        if (warpIn) q8_0_warp(v, row + (e / 32) * 34, lane);
    } else if (qt == QT_Q8_1) {
        if (warpIn) q8_1_warp(v, row + (e / 32) * 36, lane);
    } else if (qt == QT_Q8_K) {
        q8k_block(v, row + (e / 256) * 292, sh, groupIn);
    }
}

// norm_quant: rms_norm of a row of x (or of x+y, the residual add, whose
// sum goes to sum), the norm to out, times w (wrows rows) to out2, and the
// result quantized (qt) into q for the mat-mul that reads it. One block
// per row of 256, 512 or 1024 threads; n a multiple of 32 (q8_0/q8_1) or
// 256 (q8_K). The sum of squares is accumulated in double and rms_mean
// makes it the CPU's serial float32 mean (the serial chain itself where
// the order could matter); the scale computed as the CPU does. The
// QT_MMQ_* targets write the tensor-core mat-mul's layout for the
// gridDim.x rows instead, rows padded with zeros to xrb (kp) elements:
// int8 values at q, then the scales and sums (mmqMatMul's); q8_K takes n
// floats of dynamic shared memory (the row, which the warps quantize a
// super-block at a time).
extern "C" __global__ void __launch_bounds__(1024) norm_quant(const float* x, const float* y, float* sum, float* out, const float* w, float* out2,
                                                              uint8_t* q, int n, int wrows, float eps, int qt, long long xrb) { PDL_ENTRY();
    extern __shared__ float nrow[];
    __shared__ double part[32];
    __shared__ float sscale;
    __shared__ q8k_sh sh[4];
    long long r = blockIdx.x;
    const float* xr = x + r * n;
    const float* yr = y ? y + r * n : nullptr;
    float* sr = sum ? sum + r * n : nullptr;
    int tid = threadIdx.x;
    double s = 0;
    const int nth = blockDim.x;
    for (int i = tid; i < n; i += nth) {
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
        for (int k = 0; k < nth / 32; k++) t += part[k];
        float mean = rms_mean(t, n, yr ? sr : xr); // sr: x+y (it may lie on x or y)
        sscale = rms_scale(mean, eps);
    }
    __syncthreads();
    const float scale = sscale;
    const float* src = sr ? sr : xr;
    const float* wr = w ? w + (long long)(r % wrows) * n : nullptr;
    const bool mmq = qt >= QT_MMQ_Q8_0;
    const int kp = mmq ? (int)xrb : n, lane = tid & 31;
    float* xs = (float*)(q + (long long)gridDim.x * kp);
    float* xm = xs + (long long)gridDim.x * (kp / 16);
    for (int i0 = 0; i0 < kp; i0 += nth) {
        int i = i0 + tid;
        bool warpIn = i0 + (tid & ~31) < kp;
        bool groupIn = i0 + (tid & ~255) < n;
        float v = 0.f;
        if (i < n) {
            v = __fmul_rn(src[i], scale);
            out[r * n + i] = v;
            if (wr) {
                v = __fmul_rn(v, wr[i]);
                out2[r * n + i] = v;
            }
        }
        if (!mmq) quantize_at(qt, v, q, xrb, r, i, warpIn, &sh[tid >> 8], groupIn);
        else if (qt == QT_MMQ_Q8_K) {
            if (i < n) nrow[i] = v;
        } else if (warpIn)
            mmq_q8_lane(v, lane, (int8_t*)q, xs, xm, r, i >> 5, kp, qt == QT_MMQ_Q8_1);
    }
    if (qt == QT_MMQ_Q8_K) { // n = kp
        __syncthreads();
        for (int g = tid >> 5; g < n / 256; g += nth / 32) {
            float v[8];
            *(float4*)&v[0] = *(const float4*)&nrow[256 * g + 8 * lane];
            *(float4*)&v[4] = *(const float4*)&nrow[256 * g + 8 * lane + 4];
            mmq_q8k_warp(v, lane, (int8_t*)q + r * n + 256 * g, xs, xm, r * (n / 16) + 16 * g);
        }
    }
}

// swiglu_quant: swiglu of ops.cu (expf16 on each row's full 16-blocks, the
// C library's expf on the rest) and the product quantized (qt) into q.
// Rows of n (a multiple of 32, or of 256 for q8_K); 256 threads per block.
extern "C" __global__ void __launch_bounds__(256) swiglu_quant(const float* g, const float* u, float* out, uint8_t* q, int n, long long total, int qt,
                                                               long long xrb) { PDL_ENTRY();
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
            v = swiglu_v(g[i], u[i], e < full);
            out[i] = v;
        }
        quantize_at(qt, v, q, xrb, r, e, warpIn, &sh, true);
    }
}

// swiglu_mmq_q8 and swiglu_mmq_q8k: swiglu_quant's product for a batch
// (rows of n), written (out, unless null) and quantized straight into the
// tensor-core mat-mul's activation layout (mmqact.cuh) — what swiglu and
// mmq_act_q8 / mmq_act_q8k after it compute, in one pass. q8: a warp per
// 32-group, grid (ceil(kp/256), tokens); elements n..kp-1 are zero.
// q8k: a warp per super-block, eight consecutive elements a lane, grid
// (ceil(n/2048), tokens); n a multiple of 256. 256 threads.
extern "C" __global__ void __launch_bounds__(256) swiglu_mmq_q8(const float* g, const float* u, float* out, int8_t* qx, float* xs, float* xm, int n,
                                                                int kp, int withSum) { PDL_ENTRY();
    const int lane = threadIdx.x & 31, b = blockIdx.x * 8 + (threadIdx.x >> 5), t = blockIdx.y;
    if (b >= kp / 32) return; // whole warps
    const int e = b * 32 + lane;
    const long long i = (long long)t * n + e;
    float v = 0.f;
    if (e < n) {
        v = swiglu_v(g[i], u[i], e < (n & ~15));
        if (out) out[i] = v;
    }
    mmq_q8_lane(v, lane, qx, xs, xm, t, b, kp, withSum);
}
extern "C" __global__ void __launch_bounds__(256) swiglu_mmq_q8k(const float* g, const float* u, float* out, int8_t* qx, float* xs, float* xm,
                                                                 int n) { PDL_ENTRY();
    const int lane = threadIdx.x & 31, sb = blockIdx.x * 8 + (threadIdx.x >> 5);
    if (sb >= n / 256) return; // whole warps
    const long long row = (long long)blockIdx.y * n, i0 = row + sb * 256 + 8 * lane;
    float gv[8], uv[8], v[8];
    *(float4*)&gv[0] = *(const float4*)(g + i0);
    *(float4*)&gv[4] = *(const float4*)(g + i0 + 4);
    *(float4*)&uv[0] = *(const float4*)(u + i0);
    *(float4*)&uv[4] = *(const float4*)(u + i0 + 4);
#pragma unroll
    for (int k = 0; k < 8; k++) v[k] = swiglu_v(gv[k], uv[k], true); // n a multiple of 16
    if (out) {
        *(float4*)(out + i0) = *(const float4*)&v[0];
        *(float4*)(out + i0 + 4) = *(const float4*)&v[4];
    }
    mmq_q8k_warp(v, lane, qx + row + sb * 256, xs, xm, (long long)blockIdx.y * (n / 16) + sb * 16);
}

// ---------------------------------------------------------------- rope
// rope_pair_at: pair k (of headDim/2) of the head at X for the token at
// position p0, as rope_store_one and attn_x_one_rope_* compute it: the
// indices a, c it rotates (neox or normal layout; the pairs past dims
// copied) and the values o0, o1 there. The thetas follow the CPU's
// recurrence (theta *= theta_scale in float32), cos/sin in double
// rounded to float.
__device__ __forceinline__ void rope_pair_at(int k, const float* X, float p0, const float* freqs, int dims, int neox, float freqScale,
                                             float thetaScale, int& a, int& c, float& o0, float& o1) {
    const int half = dims / 2;
    if (k >= half) a = dims + 2 * (k - half), c = a + 1;
    else a = neox ? k : 2 * k, c = neox ? k + half : 2 * k + 1;
    const float x0 = X[a], x1 = X[c];
    o0 = x0, o1 = x1;
    if (k < half) {
        float theta = p0;
        for (int m = 0; m < k; m++) theta *= thetaScale;
        float ff = freqs ? freqs[k] : 1.f;
        float th = freqScale * (theta / ff);
        const float cs = (float)cos((double)th), sn = (float)sin((double)th);
        o0 = fma32(x0, cs, -__fmul_rn(x1, sn));
        o1 = fma32(x0, sn, __fmul_rn(x1, cs));
    }
}

// store_row: the n values at x into row r of a cache (F16 when f16, else
// F32), the block's threads striding over them.
__device__ __forceinline__ void store_row(void* c, const float* x, int r, int n, int f16) {
    if (f16) {
        uint16_t* o = (uint16_t*)c + (long long)r * n;
        for (int i = threadIdx.x; i < n; i += blockDim.x) o[i] = to_f16(x[i]);
    } else {
        float* o = (float*)c + (long long)r * n;
        for (int i = threadIdx.x; i < n; i += blockDim.x) o[i] = x[i];
    }
}

// rope_rows: token t's heads (H of headDim at X, out to O) roped as
// rope_pair does, after the block's cos/sin table (cs, dims floats: cos,
// sin interleaved) is filled; with kc set, every output value is also
// stored (F16 when f16) at kc + kbase + its index in the token's row.
__device__ __forceinline__ void rope_rows(const float* X, float* O, int H, int t, int headDim, int dims, int neox, const float* cs, void* kc,
                                          long long kbase, int f16) {
    const int half = dims / 2, hp = headDim / 2; // work items per head
    for (int e = threadIdx.x; e < H * hp; e += blockDim.x) {
        int h = e / hp, k = e % hp;
        long long off = ((long long)t * H + h) * headDim;
        const float* xr = X + off;
        float* o = O + off;
        int a, b;
        float o0, o1;
        if (k >= half) {
            a = dims + 2 * (k - half), b = a + 1;
            o0 = xr[a], o1 = xr[b];
        } else {
            a = neox ? k : 2 * k, b = neox ? k + half : 2 * k + 1;
            float c = cs[2 * k], s = cs[2 * k + 1];
            float x0 = xr[a], x1 = xr[b];
            o0 = fma32(x0, c, -__fmul_rn(x1, s));
            o1 = fma32(x0, s, __fmul_rn(x1, c));
        }
        o[a] = o0;
        o[b] = o1;
        if (kc) {
            const long long ka = kbase + (long long)h * headDim + a, kb = kbase + (long long)h * headDim + b;
            if (f16) {
                ((uint16_t*)kc)[ka] = to_f16(o0);
                ((uint16_t*)kc)[kb] = to_f16(o1);
            } else {
                ((float*)kc)[ka] = o0;
                ((float*)kc)[kb] = o1;
            }
        }
    }
}

// rope_cs fills the block's cos/sin table for position p (rope_pair's):
// the thetas follow the CPU's recurrence (theta *= theta_scale in
// float32, each pair's thread runs it), cos/sin in double rounded to
// float.
__device__ __forceinline__ void rope_cs(float* cs, float p, const float* freqs, int dims, float freqScale, float thetaScale) {
    for (int k = threadIdx.x; k < dims / 2; k += blockDim.x) {
        float theta = p;
        for (int m = 0; m < k; m++) theta *= thetaScale;
        float ff = freqs ? freqs[k] : 1.f;
        float th = freqScale * (theta / ff);
        cs[2 * k] = (float)cos((double)th);
        cs[2 * k + 1] = (float)sin((double)th);
    }
    __syncthreads();
}

// rope_pair: the rope of ops.cu for one or two tensors of the same tokens
// (q and k: blockIdx.y picks), one block per token (rope_cs, rope_rows):
// every pair of every head rotated in parallel. headDim even.
extern "C" __global__ void rope_pair(const float* x, float* out, int heads, const float* x2, float* out2, int heads2, const int* pos,
                                     const float* freqs, int headDim, int dims, int neox, float freqScale, float thetaScale) { PDL_ENTRY();
    extern __shared__ float cs[]; // dims: cos, sin interleaved
    const int t = blockIdx.x;
    rope_cs(cs, (float)pos[t], freqs, dims, freqScale, thetaScale);
    if (blockIdx.y) rope_rows(x2, out2, heads2, t, headDim, dims, neox, cs, nullptr, 0, 0);
    else rope_rows(x, out, heads, t, headDim, dims, neox, cs, nullptr, 0, 0);
}

// rope_store_pair: rope_pair and store_kv_pair of a batch as one launch,
// grid (tokens, 3): blockIdx.y 0 ropes q, 1 ropes k and stores each value
// it makes into the k cache's row rows[t] as well (F16 when f16), 2
// stores v's row t; rows outside the cache (ctx rows of n) are not
// stored. The caller guarantees that no output lies on another rope's
// input or on vx.
extern "C" __global__ void rope_store_pair(const float* x, float* out, int heads, const float* x2, float* out2, int heads2, const int* pos,
                                           const float* freqs, int headDim, int dims, int neox, float freqScale, float thetaScale, void* kc,
                                           void* vc, const float* vx, const int* rows, int n, int ctx, int f16) { PDL_ENTRY();
    extern __shared__ float cs[];
    const int t = blockIdx.x, r = rows[t];
    const bool st = r >= 0 && r < ctx;
    if (blockIdx.y == 2) {
        if (st) store_row(vc, vx + (long long)t * n, r, n, f16);
        return;
    }
    rope_cs(cs, (float)pos[t], freqs, dims, freqScale, thetaScale);
    if (blockIdx.y) rope_rows(x2, out2, heads2, t, headDim, dims, neox, cs, st ? kc : nullptr, (long long)r * n, f16);
    else rope_rows(x, out, heads, t, headDim, dims, neox, cs, nullptr, 0, 0);
}

// store_kv_pair: two store_kv of the same rows (K and V) in one launch,
// blockIdx.y picking; caches of type F16 (f16 = 1) or F32. grid (T, 2).
extern "C" __global__ void store_kv_pair(void* c1, const float* x1, void* c2, const float* x2, const int* rows, int n, int ctx, int f16) { PDL_ENTRY();
    int r = rows[blockIdx.x];
    if (r < 0 || r >= ctx) return;
    store_row(blockIdx.y ? c2 : c1, (blockIdx.y ? x2 : x1) + (long long)blockIdx.x * n, r, n, f16);
}

// ----------------------------------------------------- decode attention
// One query token over an F16 cache, the attention of ops.cu (the CPU's
// arithmetic and order) spread over many blocks. Pass 1 (attn_x_scores):
// grid (heads, ceil(nkvMax/128)), a thread per position: the score as the
// CPU's 64-lane ggml_vec_dot_f16 (q rounded to F16, lane x the chain over
// elements x, x+64, ..., GGML_F32x16_REDUCE, the tail in double), soft-
// capped, scaled and masked, into S; the cells in use (which fix
// llama.cpp's padded n_kv) found from the mask by every block, block
// (0, 0) storing n_kv for pass 2. Pass 2 (attn_x_values): grid (heads,
// HD/2) of 128 threads; every block redoes the softmax of its head's row
// (max; expf16 per position; each 16-block's sum reduced in float32, the
// blocks added in double in order; weights times float(1/sum), rounded to
// F16), then each thread runs one of the CPU's 64·HD output chains (lane
// m, element d: positions m, m+64, ... < n_kv&~63) into a partial, and
// the product of tail position n_kv&~63 + m; the last block of a head to
// finish (a counter) reduces each element's 64 lanes as the CPU does, adds
// the tail's products in double in order, writes the row (and its
// q8_0/q8_1 quantization for the mat-mul after it) and resets the counter.

// nkv_of: llama.cpp's padded n_kv from the mask row (the last entry that
// is not −Inf, plus one, rounded up to 32; at least 32). All threads.
__device__ int nkv_of(const float* mask, int kvLen, int* red) {
    int mine = 0;
    for (int j = threadIdx.x; j < kvLen; j += blockDim.x) {
        float m = mask[j];
        if (!(isinf(m) && m < 0)) mine = j + 1;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) mine = max(mine, __shfl_xor_sync(0xffffffffu, mine, o));
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = mine;
    __syncthreads();
    int used = 0;
    for (int k = 0; k < (int)(blockDim.x >> 5); k++) used = max(used, red[k]);
    __syncthreads();
    return max(32, (used + 31) / 32 * 32);
}

// score_f16 is one attention score over the F16 cache in the CPU's order
// (ggml512.go): 64 lane chains over the head's 64-element groups, folded
// (l, l+32), (l+16, l+48), reduced as reduce_add16, the tail in float64,
// then soft-cap, scale and the mask value m.
template <int HD>
__device__ __forceinline__ float score_f16(const float* qh, const __half* kr, float m, float scale, float softCap) {
    constexpr int NPK = HD & ~63;
    float A[64];
#pragma unroll
    for (int x = 0; x < 64; x++) A[x] = 0.f;
#pragma unroll
    for (int c = 0; c < NPK; c += 64) {
#pragma unroll
        for (int u = 0; u < 8; u++) {
            uint4 raw = *(const uint4*)(kr + c + 8 * u);
            const __half2* hp = (const __half2*)&raw;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                float2 f = __half22float2(hp[e]);
                int x = 8 * u + 2 * e;
                A[x] = __fadd_rn(A[x], __fmul_rn(qh[c + x], f.x));
                A[x + 1] = __fadd_rn(A[x + 1], __fmul_rn(qh[c + x + 1], f.y));
            }
        }
    }
    float v16[16];
#pragma unroll
    for (int l = 0; l < 16; l++) v16[l] = __fadd_rn(__fadd_rn(A[l], A[l + 32]), __fadd_rn(A[l + 16], A[l + 48]));
    double sd = (double)reduce_add16(v16);
#pragma unroll
    for (int d = NPK; d < HD; d++) sd += (double)__fmul_rn(qh[d], __half2float(kr[d]));
    float v = (float)sd;
    if (softCap > 0.f) v = __fmul_rn(cpu_tanhf(__fmul_rn(v, __fdiv_rn(1.f, softCap))), softCap);
    return __fadd_rn(__fmul_rn(v, scale), m);
}

template <int HD>
__device__ void attn_x_scores(const float* q, const __half* kc, const float* mask, float* S, int* info, int heads, int kvHeads, int kvLen, int nkvMax,
                              float scale, float softCap) {
    __shared__ float qh[HD];
    __shared__ int red[4];
    const int h = blockIdx.x, kvh = h / (heads / kvHeads);
    for (int d = threadIdx.x; d < HD; d += blockDim.x) qh[d] = __half2float(__float2half_rn(q[(long long)h * HD + d]));
    const int nkv = nkv_of(mask, kvLen, red); // (synchronizes qh too)
    if (h == 0 && blockIdx.y == 0 && threadIdx.x == 0) info[0] = nkv;
    const int j = blockIdx.y * blockDim.x + threadIdx.x;
    if (j >= nkv) return;
    float* Sh = S + (long long)h * nkvMax;
    if (j >= kvLen || (isinf(mask[j]) && mask[j] < 0)) {
        Sh[j] = -INFINITY;
        return;
    }
    const __half* kr = kc + (long long)j * HD * kvHeads + (long long)kvh * HD;
    Sh[j] = score_f16<HD>(qh, kr, mask[j], scale, softCap);
}

// AV_IL: the loads attn_x_values keeps in flight per thread in its loops.
#define AV_IL 8

// q8k_regs: quantize_row_q8_K_ref of 256 values, lane l holding elements
// 8l..8l+7 in e, by one warp into the block at b: the same extreme (the
// first element of largest magnitude), scale, quants and 16-element sums
// as q8k_block.
__device__ __forceinline__ void q8k_regs(const float (&e)[8], uint8_t* b, int lane) {
    float a = fabsf(e[0]), sv = e[0];
    int idx = 8 * lane;
#pragma unroll
    for (int k = 1; k < 8; k++)
        if (fabsf(e[k]) > a) a = fabsf(e[k]), idx = 8 * lane + k, sv = e[k];
    for (int o = 16; o > 0; o >>= 1) {
        float a2 = __shfl_xor_sync(0xffffffffu, a, o), s2 = __shfl_xor_sync(0xffffffffu, sv, o);
        int i2 = __shfl_xor_sync(0xffffffffu, idx, o);
        if (a2 > a || (a2 == a && i2 < idx)) a = a2, idx = i2, sv = s2;
    }
    const float amax = a;
    float iscale = 0.f;
    if (amax != 0.f) iscale = -127.f / sv;
    int qs = 0;
    uint32_t w0 = 0, w1 = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        int q = 0;
        if (amax != 0.f) {
            q = __float2int_rn(iscale * e[k]);
            if (q > 127) q = 127;
        }
        qs += q;
        if (k < 4) w0 |= ((uint32_t)q & 0xffu) << (8 * k);
        else w1 |= ((uint32_t)q & 0xffu) << (8 * (k - 4));
    }
    uint32_t* qw = (uint32_t*)(b + 4 + 8 * lane);
    qw[0] = w0, qw[1] = w1;
    qs += __shfl_xor_sync(0xffffffffu, qs, 1);
    if ((lane & 1) == 0) *(int16_t*)(b + 260 + lane) = (int16_t)qs;
    if (lane == 0) *(uint32_t*)b = amax != 0.f ? __float_as_uint(1.f / iscale) : 0u;
}

// q8k_warp: q8k_regs of the 256 values at v (shared memory).
__device__ __forceinline__ void q8k_warp(const float* v, uint8_t* b, int lane) {
    float e[8];
#pragma unroll
    for (int k = 0; k < 8; k++) e[k] = v[8 * lane + k];
    q8k_regs(e, b, lane);
}

// q8k_arrive: a warp has written the 32 elements out[e0..e0+31] (e0 a
// multiple of 32, one per lane) of a row whose q8_K blocks are quantized
// by whichever warp writes a block's last 32: each warp's arrival counts
// on the block's counter (counters[e0/256], zero before, zero after), and
// the eighth warp reads the block's 256 values past the L1 and quantizes
// them into q8 (the fences of a grid reduction: every lane's write before
// the count, the count before the reads).
__device__ __forceinline__ void q8k_arrive(const float* out, long long e0, uint8_t* q8, unsigned* counters, int lane) {
    const long long g = e0 / 256;
    __threadfence();
    __syncwarp();
    unsigned last = 0;
    if (lane == 0) last = atomicAdd(counters + g, 1u) == 7u;
    last = __shfl_sync(0xffffffffu, last, 0);
    if (!last) return;
    __threadfence();
    if (lane == 0) counters[g] = 0;
    float e[8];
#pragma unroll
    for (int k = 0; k < 8; k++) e[k] = __ldcg(out + 256 * g + 8 * lane + k);
    q8k_regs(e, q8 + g * 292, lane);
}

// ------------------------------------ gate/up mat-vec + swiglu + quantize
// mvs_*_w: one token's gate and up mat-vecs (mvs_*_m's rows, staged and
// computed the same way) with the swiglu after them and its activation
// quantization for the down mat-vec, in one launch (decode.go's
// swigluMatVec). A block of nw warps has 2h = nw·RPW slots (nw·RPW even):
// slots 0..h−1 take gate rows r0..r0+h−1 and slots h..2h−1
// the up rows of the same indices (r0 = blockIdx.x·h), so after the
// block's barrier it holds g and u of its rows (in shared memory) and
// thread t < h makes row r0+t's product with swiglu_quant's operations
// (expf16 on the row's full 16-blocks, the C library's expf on the rest),
// writing g, u (the mat-muls' outputs) and the product to og, ou, hout.
// The quantization groups (32 values for q8_0/q8_1, 256 for q8_K) span
// several blocks: each block counts its rows of a group on the group's
// counter (counters[g], zero before, zero after: the last arrival
// resets it), after a fence of each writing thread and the block's
// barrier, and the block whose count completes the group quantizes it
// from global memory past the L1, one warp a group, with q8_0_warp /
// q8_1_warp (one value a lane, swiglu_quant's) or q8k_regs (eight values a
// lane: q8k_block's extreme, scale, quants and sums; the attention's
// q8k_arrive) into q. n a multiple of the group with qt set (quantTarget);
// n/group counters at most. Dynamic shared memory: mvs_*_m's.

// mvw_swiglu: the swiglu and quantization part of mvs_*_w (every thread
// of the block calls it, after the barrier that follows the rows' sums):
// v holds the block's g (0..h−1) and u (h..2h−1).
__device__ __forceinline__ void mvw_swiglu(const float* v, int* lastf, float* og, float* ou, float* hout, int n, int r0, int h, uint8_t* q, int qt,
                                           unsigned* counters) {
    const int t = threadIdx.x, nr = min(h, n - r0);
    if (t < nr) {
        const float x = v[t], uv = v[h + t];
        const int e = r0 + t, full = n & ~15;
        og[e] = x;
        ou[e] = uv;
        hout[e] = swiglu_v(x, uv, e < full);
    }
    if (qt == QT_NONE) return;
    const int G = qt == QT_Q8_K ? 256 : 32, glo = r0 / G, ng = (r0 + nr - 1) / G - glo + 1;
    __threadfence(); // this thread's product before the block's count
    __syncthreads();
    if (t < ng) {
        const int g = glo + t;
        const unsigned cnt = (unsigned)(min(r0 + nr, (g + 1) * G) - max(r0, g * G));
        const bool last = atomicAdd(counters + g, cnt) + cnt == (unsigned)G;
        if (last) {
            __threadfence(); // the count before the group's reads
            counters[g] = 0;
        }
        lastf[t] = last;
    }
    __syncthreads();
    const int lane = t & 31;
    for (int k = t >> 5; k < ng; k += blockDim.x >> 5) {
        if (!lastf[k]) continue;
        const long long g = glo + k;
        __threadfence();
        if (qt == QT_Q8_K) {
            float e[8];
#pragma unroll
            for (int j = 0; j < 8; j++) e[j] = __ldcg(hout + 256 * g + 8 * lane + j);
            q8k_regs(e, q + g * 292, lane);
        } else {
            const float x = __ldcg(hout + 32 * g + lane);
            if (qt == QT_Q8_0) q8_0_warp(x, q + g * 34, lane);
            else q8_1_warp(x, q + g * 36, lane);
        }
    }
}

// MVW_MINB_*: mvs_*_m's registers (64 for Q4_0 and Q8_0, 32 for Q4_K and
// Q6_K), so the fused kernel keeps its occupancy.
#define MVW_MINB_q4_0 4
#define MVW_MINB_q8_0 4
#define MVW_MINB_q4_k 8
#define MVW_MINB_q6_k 8
#define MVW(name)                                                                                                                                   \
    extern "C" __global__ void __launch_bounds__(32 * MVS_ROWS, MVW_MINB_##name) mvs_##name##_w(const uint8_t* Wg, const uint8_t* Wu, float* og, float* ou,          \
                                                                                float* hout, int n, int nblk, long long wrb, const uint8_t* X,      \
                                                                                long long xrb, uint8_t* q, int qt, unsigned* counters) {            \
        extern __shared__ __align__(16) uint8_t mvs_sh[];                                                                                           \
        __shared__ float mvw_v[2 * MVS_ROWS];                                                                                                       \
        __shared__ int mvw_last[4];                                                                                                                 \
        constexpr int RPW = MVS_RPW_##name, L = 32 / RPW;                                                                                           \
        const int nw = blockDim.x >> 5, lane = threadIdx.x & 31, t = threadIdx.x;                                                                   \
        const int slot = (t >> 5) * RPW + lane / L, h = nw * RPW / 2, r0 = blockIdx.x * h;                                                          \
        const bool up = slot >= h;                                                                                                                  \
        const int r = r0 + (up ? slot - h : slot);                                                                                                  \
        const bool live = r < n;                                                                                                                    \
        uint8_t* ws = mvs_sh + slot * wrb;                                                                                                          \
        uint8_t* xs = mvs_sh + nw * RPW * wrb;                                                                                                      \
        if (live) stage16(ws, (up ? Wu : Wg) + (long long)r * wrb, wrb, lane % L, L);                                                              \
        PDL_ENTRY(); /* the weights' copies in flight */                                                                                            \
        stage16(xs, X, round16(xrb), t, blockDim.x);                                                                                                \
        cp_async_wait_all();                                                                                                                        \
        __syncthreads();                                                                                                                            \
        MVS_ROW_##name(ws, xs, mvw_v + slot, live, n, nblk, wrb, xrb);                                                                              \
        __syncthreads();                                                                                                                            \
        mvw_swiglu(mvw_v, mvw_last, og, ou, hout, n, r0, h, q, qt, counters);                                                                       \
    }
MVW(q4_0) MVW(q8_0) MVW(q4_k) MVW(q6_k)

template <int HD>
__device__ void attn_x_values(const float* S, const int* info, const __half* vc, float* part, unsigned* counters, float* out, int heads, int kvHeads,
                              int nkvMax, uint8_t* q8, int qt) {
    extern __shared__ float W[]; // nkvMax weights, then nkvMax/16 block sums
    float* bs = W + nkvMax;
    __shared__ float red[4];
    __shared__ double sum0;
    __shared__ bool last;
    const int h = blockIdx.x, kvh = h / (heads / kvHeads), tid = threadIdx.x, lane = tid & 31;
    const int nkv = info[0];
    const float* Sh = S + (long long)h * nkvMax;
    float mx = -INFINITY;
    // (AV_IL loads in flight at a time; the max is the same in any order.)
    for (int j0 = tid; j0 < nkv; j0 += AV_IL * blockDim.x) {
        float s8[AV_IL];
#pragma unroll
        for (int u = 0; u < AV_IL; u++) {
            const int j = j0 + u * blockDim.x;
            s8[u] = j < nkv ? Sh[j] : -INFINITY;
        }
#pragma unroll
        for (int u = 0; u < AV_IL; u++) mx = fmaxf(mx, s8[u]);
    }
    mx = warp_max(mx);
    if (lane == 0) red[tid >> 5] = mx;
    __syncthreads();
    mx = fmaxf(fmaxf(red[0], red[1]), fmaxf(red[2], red[3]));
    // softmaxSum16: nkv is a multiple of 32, so every entry is in a full 16-block.
    softmax_weights(Sh, W, bs, &sum0, nkv, mx, true);
    const long long kvRow = (long long)HD * kvHeads, vbase = (long long)kvh * HD;
    const int npV = nkv & ~63;
    const int item = blockIdx.y * blockDim.x + tid, m = item / HD, d = item % HD;
    // The chain over positions m, m+64, ... in order, AV_IL loads of V in
    // flight at a time (a zero weight skipped as the CPU skips it: no load,
    // a select instead of the add).
    float a = 0.f;
    for (int j0 = m; j0 < npV; j0 += 64 * AV_IL) {
        float w8[AV_IL], v8[AV_IL];
#pragma unroll
        for (int u = 0; u < AV_IL; u++) {
            const int j = j0 + 64 * u;
            w8[u] = j < npV ? W[j] : 0.f;
            v8[u] = w8[u] != 0.f ? __half2float(vc[j * kvRow + vbase + d]) : 0.f;
        }
#pragma unroll
        for (int u = 0; u < AV_IL; u++) a = w8[u] != 0.f ? __fadd_rn(a, __fmul_rn(w8[u], v8[u])) : a;
    }
    // Lane m also makes the tail's product of position npV+m (0 where the
    // CPU skips it: adding +0 to the double sum changes nothing).
    float tp = 0.f;
    if (npV + m < nkv && W[npV + m] != 0.f) tp = __fmul_rn(W[npV + m], __half2float(vc[(npV + m) * kvRow + vbase + d]));
    float* P = part + (long long)h * 128 * HD;
    P[m * HD + d] = a;
    P[(64 + m) * HD + d] = tp;
    __threadfence();
    __syncthreads();
    if (tid == 0) {
        unsigned done = atomicAdd(&counters[h], 1u);
        last = done == gridDim.y - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    // The other blocks' partials, read at the L2 (past this SM's L1).
    const float* L = P;
    // HD is a multiple of 32: each warp's elements are one q8_0/q8_1 block.
    for (int dd = tid; dd < HD; dd += blockDim.x) {
        float v16[16];
#pragma unroll
        for (int l = 0; l < 16; l++)
            v16[l] = __fadd_rn(__fadd_rn(__ldcg(L + l * HD + dd), __ldcg(L + (32 + l) * HD + dd)),
                               __fadd_rn(__ldcg(L + (16 + l) * HD + dd), __ldcg(L + (48 + l) * HD + dd)));
        double tail = 0;
        for (int k0 = 0; k0 < nkv - npV; k0 += AV_IL) {
            float t8[AV_IL];
#pragma unroll
            for (int u = 0; u < AV_IL; u++) t8[u] = k0 + u < nkv - npV ? __ldcg(L + (64 + k0 + u) * HD + dd) : 0.f;
#pragma unroll
            for (int u = 0; u < AV_IL; u++)
                if (k0 + u < nkv - npV) tail += (double)t8[u];
        }
        float o = (float)((double)reduce_add16(v16) + tail);
        long long e = (long long)h * HD + dd;
        out[e] = o;
        if (qt == QT_Q8_0) q8_0_warp(o, q8 + (e / 32) * 34, lane);
        else if (qt == QT_Q8_1) q8_1_warp(o, q8 + (e / 32) * 36, lane);
    }
    if (tid == 0) counters[h] = 0;
}

// attn_x_vals: pass 2 without the cross-block reduction. grid (heads,
// HD/32) of 256 threads; block (h, c) makes elements 32c..32c+31 of head
// h: it redoes the softmax of the head's row as attn_x_values does (so
// four blocks a head for HD 128, not 64), then thread (m, p) — lane
// m = tid/4, elements 32c+8p..+7 — runs those eight of the CPU's 64·HD
// output chains (positions m, m+64, ... < n_kv&~63, one 16-byte load of V
// a position) and the products of tail position n_kv&~63 + m; the chains
// and products go to shared memory and warp 0 reduces each element's 64
// lanes as the CPU does, adds the tail's products in double in order and
// writes the element (and its q8_0/q8_1 block). The same operations in the
// same order as attn_x_values: bit-identical. Dynamic shared memory:
// decodeValsShared(nkvMax).
template <int HD>
__device__ void attn_x_vals(const float* S, const int* info, const __half* vc, float* out, int heads, int kvHeads, int nkvMax, uint8_t* q8, int qt,
                            unsigned* counters) {
    extern __shared__ __align__(16) float W[]; // nkvMax weights, nkvMax/16 block sums, then P and Tp
    float* bs = W + nkvMax;
    float(*P)[33] = (float(*)[33])(W + nkvMax + nkvMax / 16);
    float(*Tp)[33] = P + 64;
    __shared__ float red[8];
    __shared__ double sum0;
    const int h = blockIdx.x, kvh = h / (heads / kvHeads), tid = threadIdx.x, lane = tid & 31;
    const int nkv = info[0];
    const float* Sh = S + (long long)h * nkvMax;
    float mx = -INFINITY;
    for (int j0 = tid; j0 < nkv; j0 += AV_IL * blockDim.x) {
        float s8[AV_IL];
#pragma unroll
        for (int u = 0; u < AV_IL; u++) {
            const int j = j0 + u * blockDim.x;
            s8[u] = j < nkv ? Sh[j] : -INFINITY;
        }
#pragma unroll
        for (int u = 0; u < AV_IL; u++) mx = fmaxf(mx, s8[u]);
    }
    mx = warp_max(mx);
    if (lane == 0) red[tid >> 5] = mx;
    __syncthreads();
#pragma unroll
    for (int w = 0; w < 8; w++) mx = fmaxf(mx, red[w]);
    softmax_weights(Sh, W, bs, &sum0, nkv, mx, true);
    const long long kvRow = (long long)HD * kvHeads;
    const int npV = nkv & ~63, m = tid >> 2, p = tid & 3, d0 = blockIdx.y * 32 + 8 * p;
    const __half* vb = vc + (long long)kvh * HD + d0;
    float a[8];
#pragma unroll
    for (int e = 0; e < 8; e++) a[e] = 0.f;
    for (int j0 = m; j0 < npV; j0 += 64 * AV_IL) {
        float w8[AV_IL];
        uint4 v8[AV_IL];
#pragma unroll
        for (int u = 0; u < AV_IL; u++) {
            const int j = j0 + 64 * u;
            w8[u] = j < npV ? W[j] : 0.f;
            v8[u] = w8[u] != 0.f ? *(const uint4*)(vb + j * kvRow) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < AV_IL; u++) {
            const __half2* h2 = (const __half2*)&v8[u];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                float2 f = __half22float2(h2[e]);
                a[2 * e] = w8[u] != 0.f ? __fadd_rn(a[2 * e], __fmul_rn(w8[u], f.x)) : a[2 * e];
                a[2 * e + 1] = w8[u] != 0.f ? __fadd_rn(a[2 * e + 1], __fmul_rn(w8[u], f.y)) : a[2 * e + 1];
            }
        }
    }
    float tp[8];
#pragma unroll
    for (int e = 0; e < 8; e++) tp[e] = 0.f;
    if (npV + m < nkv && W[npV + m] != 0.f) {
        const float w = W[npV + m];
        uint4 raw = *(const uint4*)(vb + (npV + m) * kvRow);
        const __half2* h2 = (const __half2*)&raw;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            float2 f = __half22float2(h2[e]);
            tp[2 * e] = __fmul_rn(w, f.x);
            tp[2 * e + 1] = __fmul_rn(w, f.y);
        }
    }
#pragma unroll
    for (int e = 0; e < 8; e++) {
        P[m][8 * p + e] = a[e];
        Tp[m][8 * p + e] = tp[e];
    }
    __syncthreads();
    if (tid >= 32) return;
    const int dd = tid;
    float v16[16];
#pragma unroll
    for (int l = 0; l < 16; l++) v16[l] = __fadd_rn(__fadd_rn(P[l][dd], P[32 + l][dd]), __fadd_rn(P[16 + l][dd], P[48 + l][dd]));
    double tail = 0;
    for (int k = 0; k < nkv - npV; k++) tail += (double)Tp[k][dd];
    float o = (float)((double)reduce_add16(v16) + tail);
    long long e = (long long)h * HD + blockIdx.y * 32 + dd;
    out[e] = o;
    if (qt == QT_Q8_0) q8_0_warp(o, q8 + (e / 32) * 34, lane);
    else if (qt == QT_Q8_1) q8_1_warp(o, q8 + (e / 32) * 36, lane);
    else if (qt == QT_Q8_K) q8k_arrive(out, e - dd, q8, counters, lane);
}

#define ATTN_X(HD)                                                                                                                                 \
    extern "C" __global__ void __launch_bounds__(128) attn_x_scores_##HD(const float* q, const __half* kc, const float* mask, float* S, int* info,  \
                                                                         int heads, int kvHeads, int kvLen, int nkvMax, float scale, float softCap) { PDL_ENTRY(); \
        attn_x_scores<HD>(q, kc, mask, S, info, heads, kvHeads, kvLen, nkvMax, scale, softCap);                                                   \
    }                                                                                                                                              \
    extern "C" __global__ void __launch_bounds__(128) attn_x_values_##HD(const float* S, const int* info, const __half* vc, float* part,           \
                                                                         unsigned* counters, float* out, int heads, int kvHeads, int nkvMax,      \
                                                                         uint8_t* q8, int qt) { PDL_ENTRY();                                                  \
        attn_x_values<HD>(S, info, vc, part, counters, out, heads, kvHeads, nkvMax, q8, qt);                                                      \
    }                                                                                                                                              \
    extern "C" __global__ void __launch_bounds__(256) attn_x_vals_##HD(const float* S, const int* info, const __half* vc, float* out, int heads,    \
                                                                       int kvHeads, int nkvMax, uint8_t* q8, int qt, unsigned* counters) { PDL_ENTRY();      \
        attn_x_vals<HD>(S, info, vc, out, heads, kvHeads, nkvMax, q8, qt, counters);                                                              \
    }
ATTN_X(64) ATTN_X(96) ATTN_X(128) ATTN_X(256)

// attn_x_one: the split attention's scores, softmax, weighted values and
// reduction for one query token in ONE block per head (ONE_THREADS threads), for
// short rows (nkvMax <= decode.go's decodeOneMaxKV): the scores
// and the 64 lanes' partials stay in shared memory, so there is no second
// launch, no global round trip of the partials, no fence or counter. The
// head's V rows in use are copied to shared memory first (16-byte
// cp.async copies, all in flight while the scores and the softmax run):
// the value chains, many per thread, then read shared memory instead of
// waiting on one global load after another. Every value is computed with
// attn_x_scores' and attn_x_values' operations in their order (the code
// is theirs, the loops over positions and lanes strided by the block):
// the results are theirs bit for bit. Dynamic shared memory: q's row
// (HD), 64 words of scratch, the scores/weights (nkvMax), their 16-block
// sums (nkvMax/16), the 128 lanes' partials of HD, then (16-byte aligned)
// the V rows, nkvMax·HD halves, and the current token's k row, HD halves
// (decode.go's decodeOneShared).
// ONE_IL: the value chains a thread of attn_x_one runs side by side.
#define ONE_IL 4
// ONE_THREADS: attn_x_one's block (decode.go's attnOneThreads).
#define ONE_THREADS 512

// attn_rope: the rope/store group attn_x_one_rope_* runs before its
// attention (rope_store_one's arguments): q and k before their rope (x,
// x2), their rope outputs (out, out2), the current token's v (vx) and its
// cache row rows[0] (the caches are the attention's, F16, n = kvHeads·HD
// values a row, ctx rows).
struct attn_rope {
    const float *x, *x2, *vx;
    const int* pos;
    const float* freqs;
    float *out, *out2;
    const int* rows;
    int dims, neox, n, ctx;
    float freqScale, thetaScale;
    int early; // the cache reads before the PDL wait (attn_one_cached)
};

// attn_one_cached: attn_x_one_rope's reads of what the step's kernels do
// not write (all threads): n_kv from the mask, the V rows of the positions
// below it but r copied into Vs (cp.async, HD/8 copies a row), their K rows
// prefetched into L2 (a 128-byte line a prefetch).
template <int HD>
__device__ __forceinline__ int attn_one_cached(const float* mask, int kvLen, int* redi, const __half* kc, const __half* vc, __half* Vs, int r,
                                               long long kvRow, long long vbase) {
    const int tid = threadIdx.x, nth = blockDim.x;
    const int nkv = nkv_of(mask, kvLen, redi);
    for (int c = tid; c < nkv * (HD / 8); c += nth) {
        const int j = c / (HD / 8), k = c % (HD / 8);
        if (j != r) cp_async16((uint8_t*)(Vs + j * HD + 8 * k), (const uint8_t*)(vc + j * kvRow + vbase + 8 * k));
    }
    for (int c = tid; c < nkv * (HD / 64); c += nth) {
        const int j = c / (HD / 64), k = c % (HD / 64);
        if (j != r && j < kvLen) prefetch_l2(kc + j * kvRow + vbase + 64 * k);
    }
    return nkv;
}

template <int HD>
__device__ void attn_x_one(const float* q, const __half* kc, const __half* vc, const float* mask, float* out, int heads, int kvHeads, int kvLen,
                           int nkvMax, float scale, float softCap, uint8_t* q8, int qt, unsigned* counters, const attn_rope* ro = nullptr) {
    // Dynamic shared memory only (but sum0), so that the kernel's static
    // part stays within attentionStaticShared of decode.go's limit.
    extern __shared__ __align__(16) float qh[]; // HD; 32 ints; 32 floats; nkvMax scores, then weights; nkvMax/16 block sums; 128·HD partials; V rows
    int* redi = (int*)(qh + HD);
    float* red = qh + HD + 32;
    float* W = red + 32;
    float* bs = W + nkvMax;
    float* P = bs + nkvMax / 16;
    __half* Vs = (__half*)(qh + ((HD + 64 + nkvMax + nkvMax / 16 + 128 * HD + 3) & ~3));
    __shared__ double sum0;
    __half* kcur = Vs + nkvMax * HD; // with ro: the current token's k row (after its rope), as the cache holds it
    const int h = blockIdx.x, group = heads / kvHeads, kvh = h / group, tid = threadIdx.x, lane = tid & 31, nth = blockDim.x;
    // With ro, the current token's cache row r: this block's rope of q head
    // h and k head kvh, the latter (with v) stored by the group's first
    // block; every block of the group takes row r's k and v from its own
    // values, never from the cache another block is writing.
    const int r = ro ? ro->rows[0] : -1;
    const long long kvRow = (long long)HD * kvHeads, vbase = (long long)kvh * HD;
    int nkv;
    if (ro) {
        // Before the wait (pdl.go's rule for attn_x_one_rope_*): the mask
        // and the row (inputs of the step, written before it), n_kv, the V
        // rows of the other positions into shared memory and their K rows
        // into L2 — cache rows earlier steps wrote; row r is this step's,
        // from its own values after the wait.
        // Only with ro->early: the launch code has seen that no kernel of
        // the step before this one writes the caches, the mask or the row
        // (and that one ran before it in the step); else after the wait.
        if (ro->early) nkv = attn_one_cached<HD>(mask, kvLen, redi, kc, vc, Vs, r, kvRow, vbase);
        PDL_ENTRY();
        if (!ro->early) nkv = attn_one_cached<HD>(mask, kvLen, redi, kc, vc, Vs, r, kvRow, vbase);
        const float p0 = (float)ro->pos[0];
        const bool st = h % group == 0 && r >= 0 && r < ro->ctx;
        for (int t = tid; t < HD; t += nth) { // pairs t < HD/2 of q, the rest k's
            const bool isK = t >= HD / 2;
            const int k = isK ? t - HD / 2 : t;
            const long long off = (long long)(isK ? kvh : h) * HD;
            int a, c;
            float o0, o1;
            rope_pair_at(k, (isK ? ro->x2 : ro->x) + off, p0, ro->freqs, ro->dims, ro->neox, ro->freqScale, ro->thetaScale, a, c, o0, o1);
            if (!isK) {
                ro->out[off + a] = o0, ro->out[off + c] = o1;
                qh[a] = __half2float(__float2half_rn(o0)), qh[c] = __half2float(__float2half_rn(o1));
            } else {
                kcur[a] = __float2half_rn(o0), kcur[c] = __float2half_rn(o1);
                if (h % group == 0) ro->out2[off + a] = o0, ro->out2[off + c] = o1;
                if (st) {
                    ((uint16_t*)kc)[(long long)r * ro->n + off + a] = to_f16(o0);
                    ((uint16_t*)kc)[(long long)r * ro->n + off + c] = to_f16(o1);
                }
            }
        }
        if (st)
            for (int d = tid; d < HD; d += nth) ((uint16_t*)vc)[(long long)r * ro->n + (long long)kvh * HD + d] = to_f16(ro->vx[(long long)kvh * HD + d]);
        // Row r's V from the token's v.
        if (r >= 0 && r < nkv)
            for (int d = tid; d < HD; d += nth) Vs[r * HD + d] = __float2half_rn(ro->vx[vbase + d]);
        __syncthreads(); // qh, kcur and V row r
    } else {
        for (int d = tid; d < HD; d += nth) qh[d] = __half2float(__float2half_rn(q[(long long)h * HD + d]));
        nkv = nkv_of(mask, kvLen, redi); // (synchronizes qh too)
        // The V rows of positions < n_kv (those the chains read), HD/8
        // copies a row.
        for (int c = tid; c < nkv * (HD / 8); c += nth) {
            const int j = c / (HD / 8), k = c % (HD / 8);
            cp_async16((uint8_t*)(Vs + j * HD + 8 * k), (const uint8_t*)(vc + j * kvRow + vbase + 8 * k));
        }
    }
    // Scores (attn_x_scores).
    for (int j = tid; j < nkv; j += nth) {
        if (j >= kvLen || (isinf(mask[j]) && mask[j] < 0)) {
            W[j] = -INFINITY;
            continue;
        }
        const __half* kr = j == r ? kcur : kc + (long long)j * HD * kvHeads + (long long)kvh * HD;
        W[j] = score_f16<HD>(qh, kr, mask[j], scale, softCap);
    }
    __syncthreads();
    // Softmax (attn_x_values).
    float mx = -INFINITY;
    for (int j = tid; j < nkv; j += nth) mx = fmaxf(mx, W[j]);
    mx = warp_max(mx);
    if (lane == 0) red[tid >> 5] = mx;
    __syncthreads();
    mx = red[0];
    for (int k = 1; k < nth / 32; k++) mx = fmaxf(mx, red[k]);
    softmax_weights(W, W, bs, &sum0, nkv, mx, true);
    // The 64 lanes' partials and the tail's products (attn_x_values), the
    // V rows from shared memory.
    cp_async_wait_all();
    __syncthreads();
    // A thread runs ONE_IL items' chains side by side (every chain of a
    // row has npV/64 steps), so their shared-memory reads overlap; a zero
    // weight is skipped as the CPU skips it (a select, not a branch).
    const int npV = nkv & ~63;
    for (int item0 = tid; item0 < 64 * HD; item0 += ONE_IL * nth) {
        float a[ONE_IL], tp[ONE_IL];
        int it[ONE_IL];
#pragma unroll
        for (int u = 0; u < ONE_IL; u++) {
            it[u] = min(item0 + u * nth, 64 * HD - 1); // (a duplicate of the last item where past the end: the same values)
            a[u] = 0.f;
        }
        for (int j0 = 0; j0 < npV; j0 += 64) {
#pragma unroll
            for (int u = 0; u < ONE_IL; u++) {
                const int m = it[u] / HD, d = it[u] % HD;
                const float w = W[j0 + m], v = __half2float(Vs[(j0 + m) * HD + d]);
                a[u] = w != 0.f ? __fadd_rn(a[u], __fmul_rn(w, v)) : a[u];
            }
        }
#pragma unroll
        for (int u = 0; u < ONE_IL; u++) {
            const int m = it[u] / HD, d = it[u] % HD;
            tp[u] = 0.f;
            if (npV + m < nkv && W[npV + m] != 0.f) tp[u] = __fmul_rn(W[npV + m], __half2float(Vs[(npV + m) * HD + d]));
        }
#pragma unroll
        for (int u = 0; u < ONE_IL; u++) {
            const int m = it[u] / HD, d = it[u] % HD;
            P[m * HD + d] = a[u];
            P[(64 + m) * HD + d] = tp[u];
        }
    }
    __syncthreads();
    // The reduction of the last block of attn_x_values.
    for (int dd = tid; dd < HD; dd += nth) {
        float v16[16];
#pragma unroll
        for (int l = 0; l < 16; l++)
            v16[l] = __fadd_rn(__fadd_rn(P[l * HD + dd], P[(32 + l) * HD + dd]), __fadd_rn(P[(16 + l) * HD + dd], P[(48 + l) * HD + dd]));
        double tail = 0;
        for (int k = 0; k < nkv - npV; k++) tail += (double)P[(64 + k) * HD + dd];
        float o = (float)((double)reduce_add16(v16) + tail);
        long long e = (long long)h * HD + dd;
        out[e] = o;
        if (qt == QT_Q8_0) q8_0_warp(o, q8 + (e / 32) * 34, lane);
        else if (qt == QT_Q8_1) q8_1_warp(o, q8 + (e / 32) * 36, lane);
        else if (qt == QT_Q8_K) q8k_arrive(out, e - lane, q8, counters, lane);
    }
}

#define ATTN_ONE(HD)                                                                                                                               \
    extern "C" __global__ void __launch_bounds__(ONE_THREADS) attn_x_one_##HD(const float* q, const __half* kc, const __half* vc, const float* mask,       \
                                                                      float* out, int heads, int kvHeads, int kvLen, int nkvMax, float scale,    \
                                                                      float softCap, uint8_t* q8, int qt, unsigned* counters) { PDL_ENTRY();                  \
        attn_x_one<HD>(q, kc, vc, mask, out, heads, kvHeads, kvLen, nkvMax, scale, softCap, q8, qt, counters);                                 \
    }                                                                                                                                              \
    /* rope_store_one's group and attn_x_one in one launch (decode.go's ropeAttention). */                                                      \
    extern "C" __global__ void __launch_bounds__(ONE_THREADS) attn_x_one_rope_##HD(                                                              \
        const float* x, float* qout, const float* x2, float* kout, const float* vx, const int* pos, const float* freqs, int dims, int neox,       \
        float freqScale, float thetaScale, const int* rows, int n, int ctx, __half* kc, __half* vc, const float* mask, float* out, int heads,     \
        int kvHeads, int kvLen, int nkvMax, float scale, float softCap, uint8_t* q8, int qt, unsigned* counters, int early) {                   \
        /* PDL_ENTRY in attn_x_one */                                                                                                              \
        const attn_rope ro{x, x2, vx, pos, freqs, qout, kout, rows, dims, neox, n, ctx, freqScale, thetaScale, early};                            \
        attn_x_one<HD>(nullptr, kc, vc, mask, out, heads, kvHeads, kvLen, nkvMax, scale, softCap, q8, qt, counters, &ro);                          \
    }
ATTN_ONE(64) ATTN_ONE(96) ATTN_ONE(128) ATTN_ONE(256)

// ------------------------------- staged mat-vec + last-block tail (one token)
// mvs_*_tn and mvs_*_tr: mvs_*_m (one to three weights over one token's
// activations) whose last block to finish (a counter, as attn_x_values'
// last block) then runs, alone, the single-block work of the nodes after
// the mat-mul that a separate launch would do: _tn the norm chain of
// norm_quant (residual add, rms_norm, the norm weight, the quantization
// for the mat-mul after it), _tr the q/k rope pair and the k/v store of
// rope_pair and store_kv_pair. Every block has written its rows (and read
// its activations) before the last one starts, so the tail reads the
// mat-vec's outputs and may write over the activations (the tail's
// quantized row goes to the workspace the mat-vec read). The tails' code
// is norm_quant's, rope_pair's and store_kv_pair's for one token, in the
// same operations (the thread count does not enter any value). Shared
// memory: mvs_*_m's, then MVT_SCRATCH bytes (decode.go's tailScratch).
#define MVT_SCRATCH (64 + 16 + (int)sizeof(q8k_sh))

// mvt_last: every thread of every block calls it after the block's rows
// are written; true (in all of its threads) in the last block to get
// there, which then sees every block's writes (the fences of a grid
// barrier: thread 0's, after and before the block's barriers). It leaves
// the counter zero.
__device__ __forceinline__ bool mvt_last(unsigned* counter, int* flag) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        const bool last = atomicAdd(counter, 1u) == gridDim.x - 1;
        if (last) {
            __threadfence();
            *counter = 0;
        }
        *flag = last;
    }
    __syncthreads();
    return *flag;
}

// TAIL_K: the elements a tail thread loads at once (every load of a round
// issued before the first use; a few registers, so that the mat-vec's
// occupancy stays that of mvs_*_m).
#define TAIL_K 8

// norm_tail: norm_quant's row 0 (of one) by this block of nth threads
// (32..256), thread t taking elements t, t+nth, ... (norm_quant's with nth
// threads),
// in rounds of TAIL_K elements whose loads fly together; the sums (or x)
// are kept in shared memory at vs (n floats: the mat-vec's staged rows,
// free by now) for the second pass, which leaves there the values q8_K
// blocks are quantized from, by one warp each (q8_0/q8_1 blocks are a
// warp's elements). x and y are read past the L1 (other blocks wrote
// them).
__device__ void norm_tail(uint8_t* scratch, float* vs, const float* x, const float* y, float* sum, float* out, const float* w, float* out2, uint8_t* q,
                          int n, float eps, int qt, long long xrb) {
    double* part = (double*)scratch;
    float* sscale = (float*)(scratch + 64);
    const int tid = threadIdx.x, lane = tid & 31, nth = blockDim.x;
    double s = 0;
    for (int i0 = 0; i0 < n; i0 += nth * TAIL_K) {
        float vx[TAIL_K], vy[TAIL_K];
#pragma unroll
        for (int k = 0; k < TAIL_K; k++) {
            const int i = i0 + tid + nth * k;
            vx[k] = i < n ? __ldcg(x + i) : 0.f;
            vy[k] = y && i < n ? __ldcg(y + i) : 0.f;
        }
#pragma unroll
        for (int k = 0; k < TAIL_K; k++) {
            const int i = i0 + tid + nth * k;
            if (i < n) {
                float v = vx[k];
                if (y) {
                    v = __fadd_rn(v, vy[k]);
                    sum[i] = v;
                }
                vs[i] = v;
                s += (double)__fmul_rn(v, v);
            }
        }
    }
    s = warp_sum_d(s);
    if (lane == 0) part[tid >> 5] = s;
    __syncthreads();
    if (tid == 0) {
        double t = 0;
        for (int k = 0; k < nth / 32; k++) t += part[k];
        float mean = rms_mean(t, n, vs); // vs: the row (x, or x+y)
        *sscale = rms_scale(mean, eps);
    }
    __syncthreads();
    const float scale = *sscale;
    for (int i0 = 0; i0 < n; i0 += nth * TAIL_K) {
        float vw[TAIL_K];
#pragma unroll
        for (int k = 0; k < TAIL_K; k++) {
            const int i = i0 + tid + nth * k;
            vw[k] = w && i < n ? w[i] : 0.f;
        }
#pragma unroll
        for (int k = 0; k < TAIL_K; k++) {
            const int j0 = i0 + nth * k, i = j0 + tid;
            if (j0 >= n) break;
            float v = 0.f;
            if (i < n) {
                v = __fmul_rn(vs[i], scale);
                out[i] = v;
                if (w) {
                    v = __fmul_rn(v, vw[k]);
                    out2[i] = v;
                }
                vs[i] = v;
            }
            if (qt != QT_Q8_K && j0 + (tid & ~31) < n) {
                if (qt == QT_Q8_0) q8_0_warp(v, q + (i / 32) * 34, lane);
                else if (qt == QT_Q8_1) q8_1_warp(v, q + (i / 32) * 36, lane);
            }
        }
    }
    if (qt == QT_Q8_K) {
        __syncthreads();
        for (int g = tid >> 5; g < n / 256; g += nth / 32) q8k_warp(vs + 256 * g, q + (long long)g * 292, lane);
    }
}

// TAIL_RJ: the pairs of each rope (and values of the v row) a rope tail
// thread loads at once.
#define TAIL_RJ 4

// rope_tail: rope_pair's token 0 for x (heads) and x2 (heads2), and
// store_kv_pair's row rows[0]: the k rope's output (out2, whose n values
// are the k store's source) and vx into the caches kc and vc (F16 when
// f16), in rounds of TAIL_RJ pairs of each rope and values of v whose
// loads fly together (the caller guarantees that no rope output lies on
// another rope's input or on vx, so a round may load before the rounds
// before it have written). The inputs are the mat-vec's outputs, read
// past the L1.
__device__ void rope_tail(float* cs, const float* x, float* out, int heads, const float* x2, float* out2, int heads2, const int* pos, const float* freqs,
                          int headDim, int dims, int neox, float freqScale, float thetaScale, void* kc, void* vc, const float* vx, const int* rows, int n,
                          int ctx, int f16) {
    const int half = dims / 2, hp = headDim / 2, tid = threadIdx.x, nth = blockDim.x;
    const int r = rows[0];
    const bool st = r >= 0 && r < ctx;
    const int I0 = heads * hp, I1 = heads2 * hp, Imax = max(max(I0, I1), n);
    for (int e0 = 0; e0 < Imax; e0 += nth * TAIL_RJ) {
        float a0[2][TAIL_RJ], a1[2][TAIL_RJ], v[TAIL_RJ];
#pragma unroll
        for (int pass = 0; pass < 2; pass++) {
            const float* X = pass ? x2 : x;
            const int I = pass ? I1 : I0;
#pragma unroll
            for (int j = 0; j < TAIL_RJ; j++) {
                const int e = e0 + tid + nth * j, h = e / hp, k = e % hp;
                int a, b;
                if (k >= half) a = dims + 2 * (k - half), b = a + 1;
                else a = neox ? k : 2 * k, b = neox ? k + half : 2 * k + 1;
                const float* xr = X + (long long)h * headDim;
                a0[pass][j] = e < I ? __ldcg(xr + a) : 0.f;
                a1[pass][j] = e < I ? __ldcg(xr + b) : 0.f;
            }
        }
#pragma unroll
        for (int j = 0; j < TAIL_RJ; j++) {
            const int i = e0 + tid + nth * j;
            v[j] = st && i < n ? __ldcg(vx + i) : 0.f;
        }
        if (e0 == 0) rope_cs(cs, (float)pos[0], freqs, dims, freqScale, thetaScale);
#pragma unroll
        for (int pass = 0; pass < 2; pass++) {
            float* O = pass ? out2 : out;
            const int I = pass ? I1 : I0;
#pragma unroll
            for (int j = 0; j < TAIL_RJ; j++) {
                const int e = e0 + tid + nth * j, h = e / hp, k = e % hp;
                if (e >= I) break;
                int a, b;
                float o0, o1;
                if (k >= half) {
                    a = dims + 2 * (k - half), b = a + 1;
                    o0 = a0[pass][j], o1 = a1[pass][j];
                } else {
                    a = neox ? k : 2 * k, b = neox ? k + half : 2 * k + 1;
                    const float c = cs[2 * k], s = cs[2 * k + 1], x0 = a0[pass][j], x1 = a1[pass][j];
                    o0 = fma32(x0, c, -__fmul_rn(x1, s));
                    o1 = fma32(x0, s, __fmul_rn(x1, c));
                }
                const long long off = (long long)h * headDim;
                O[off + a] = o0;
                O[off + b] = o1;
                if (pass && st) {
                    const long long ci = (long long)r * n + off;
                    if (f16) {
                        ((uint16_t*)kc)[ci + a] = to_f16(o0);
                        ((uint16_t*)kc)[ci + b] = to_f16(o1);
                    } else {
                        ((float*)kc)[ci + a] = o0;
                        ((float*)kc)[ci + b] = o1;
                    }
                }
            }
        }
        if (st) {
#pragma unroll
            for (int j = 0; j < TAIL_RJ; j++) {
                const int i = e0 + tid + nth * j;
                if (i >= n) break;
                if (f16) ((uint16_t*)vc)[(long long)r * n + i] = to_f16(v[j]);
                else ((float*)vc)[(long long)r * n + i] = v[j];
            }
        }
    }
}

// The mvs_*_m body: the block's rows of W0, W1, W2 (r0, r1, r2 rows; a
// weight of no rows is skipped) into o0, o1, o2. Leaves xs, the staged
// activations, at the end of the rows.
#define MVT_BODY(name)                                                                                                                              \
    extern __shared__ __align__(16) uint8_t mvs_sh[];                                                                                               \
    constexpr int RPW = MVS_RPW_##name, L = 32 / RPW;                                                                                               \
    const int nw = blockDim.x >> 5, lane = threadIdx.x & 31, slot = (threadIdx.x >> 5) * RPW + lane / L;                                            \
    int r = blockIdx.x * (nw * RPW) + slot;                                                                                                         \
    const uint8_t* W = W0;                                                                                                                          \
    float* o = o0;                                                                                                                                  \
    int rows = r0;                                                                                                                                  \
    if (r >= r0) {                                                                                                                                  \
        r -= r0, W = W1, o = o1, rows = r1;                                                                                                         \
        if (r >= r1) r -= r1, W = W2, o = o2, rows = r2;                                                                                            \
    }                                                                                                                                               \
    const bool live = r < rows;                                                                                                                     \
    uint8_t* ws = mvs_sh + slot * wrb;                                                                                                              \
    uint8_t* xs = mvs_sh + nw * RPW * wrb;                                                                                                          \
    if (live) stage16(ws, W + (long long)r * wrb, wrb, lane % L, L);                                                                                \
    stage16(xs, X, round16(xrb), threadIdx.x, blockDim.x);                                                                                          \
    cp_async_wait_all();                                                                                                                            \
    __syncthreads();                                                                                                                                \
    MVS_ROW_##name(ws, xs, o + r, live, rows, nblk, wrb, xrb);                                                                                      \
    uint8_t* scratch = xs + round16(xrb);

// MVT_MINB_*: the blocks per SM whose register budget the tail kernels
// keep (mvs_*_m's: 64 registers for Q4_0 and Q8_0, 32 for Q4_K and Q6_K).
#define MVT_MINB_q4_0 4
#define MVT_MINB_q8_0 4
#define MVT_MINB_q4_k 8
#define MVT_MINB_q6_k 8

#define MVST(name)                                                                                                                                  \
    extern "C" __global__ void __launch_bounds__(32 * MVS_ROWS, MVT_MINB_##name) mvs_##name##_tn(                                                                    \
        const uint8_t* W0, const uint8_t* W1, const uint8_t* W2, float* o0, float* o1, float* o2, int r0, int r1, int r2, int nblk, long long wrb,  \
        const uint8_t* X, long long xrb, unsigned* counter, const float* nx, const float* ny, float* nsum, float* nout, const float* nwt,          \
        float* nout2, uint8_t* q, int n, float eps, int qt, long long qxrb, int vsOff) { PDL_ENTRY();                                                            \
        MVT_BODY(name)                                                                                                                              \
        if (mvt_last(counter, (int*)(scratch + 68)))                                                                                                \
            norm_tail(scratch, (float*)(mvs_sh + vsOff), nx, ny, nsum, nout, nwt, nout2, q, n, eps, qt, qxrb);                                      \
    }                                                                                                                                               \
    extern "C" __global__ void __launch_bounds__(32 * MVS_ROWS, MVT_MINB_##name) mvs_##name##_tr(                                                                    \
        const uint8_t* W0, const uint8_t* W1, const uint8_t* W2, float* o0, float* o1, float* o2, int r0, int r1, int r2, int nblk, long long wrb,  \
        const uint8_t* X, long long xrb, unsigned* counter, const float* rx, float* rout, int heads, const float* rx2, float* rout2, int heads2,    \
        const int* pos, const float* freqs, int headDim, int dims, int neox, float freqScale, float thetaScale, void* kc, void* vc,                \
        const float* vx, const int* kvrows, int kvn, int ctx, int f16) { PDL_ENTRY();                                                                            \
        MVT_BODY(name)                                                                                                                              \
        if (mvt_last(counter, (int*)(scratch + 68)))                                                                                                \
            rope_tail((float*)(scratch + 80), rx, rout, heads, rx2, rout2, heads2, pos, freqs, headDim, dims, neox, freqScale, thetaScale, kc, vc,  \
                      vx, kvrows, kvn, ctx, f16);                                                                                                   \
    }
MVST(q4_0) MVST(q8_0) MVST(q4_k) MVST(q6_k)

// ------------------------------------- one-token norm chain and rope/store
// norm_one and rope_store_one: the work of norm_quant and of rope_pair +
// store_kv_pair for one token, laid out for latency: every global load a
// thread needs is issued before the first use (one round of waiting, not
// one per element stride), and the rope/store spreads over a block per
// head. They compute with the same operations in the same order as the
// kernels they stand for (and as the mat-vec tails), so the results are
// theirs bit for bit.

// NORM1_K: the elements per thread of norm_one (n <= NORM1_K·blockDim).
#define NORM1_K 8

// norm_one: norm_quant's row 0 (of one): x (+ y, the sum to sum),
// rms_norm to out, times w to out2, quantized (qt) into q; thread t takes
// elements t, t+nth, ... (norm_quant's). Dynamic shared memory: n floats
// when qt is q8_K (the values its warps quantize), else none. n a
// multiple of 32 (q8_0/q8_1) or 256 (q8_K) when quantizing.
extern "C" __global__ void __launch_bounds__(1024) norm_one(const float* x, const float* y, float* sum, float* out, const float* w, float* out2,
                                                            uint8_t* q, int n, float eps, int qt) { PDL_ENTRY();
    extern __shared__ float nvs[];
    __shared__ double part[32];
    __shared__ float sscale;
    const int tid = threadIdx.x, lane = tid & 31, nth = blockDim.x;
    float v[NORM1_K], vy[NORM1_K], vw[NORM1_K];
#pragma unroll
    for (int k = 0; k < NORM1_K; k++) {
        const int i = tid + nth * k;
        v[k] = i < n ? x[i] : 0.f;
        vy[k] = y && i < n ? y[i] : 0.f;
        vw[k] = w && i < n ? w[i] : 0.f;
    }
    double s = 0;
#pragma unroll
    for (int k = 0; k < NORM1_K; k++) {
        const int i = tid + nth * k;
        if (i < n) {
            if (y) {
                v[k] = __fadd_rn(v[k], vy[k]);
                sum[i] = v[k];
            }
            s += (double)__fmul_rn(v[k], v[k]);
        }
    }
    s = warp_sum_d(s);
    if (lane == 0) part[tid >> 5] = s;
    __syncthreads();
    if (tid < 32) { // (rms_mean takes the squares summed in any order)
        const double t = warp_sum_d(tid < nth / 32 ? part[tid] : 0.0);
        if (tid == 0) {
            float mean = rms_mean(t, n, y ? sum : x); // the row (x, or x+y)
            sscale = rms_scale(mean, eps);
        }
    }
    __syncthreads();
    const float scale = sscale;
#pragma unroll
    for (int k = 0; k < NORM1_K; k++) {
        const int j0 = nth * k, i = j0 + tid;
        if (j0 >= n) break;
        float o = 0.f;
        if (i < n) {
            o = __fmul_rn(v[k], scale);
            out[i] = o;
            if (w) {
                o = __fmul_rn(o, vw[k]);
                out2[i] = o;
            }
            if (qt == QT_Q8_K) nvs[i] = o;
        }
        if (qt != QT_Q8_K && j0 + (tid & ~31) < n) {
            if (qt == QT_Q8_0) q8_0_warp(o, q + (i / 32) * 34, lane);
            else if (qt == QT_Q8_1) q8_1_warp(o, q + (i / 32) * 36, lane);
        }
    }
    if (qt == QT_Q8_K) {
        __syncthreads();
        for (int g = tid >> 5; g < n / 256; g += nth / 32) q8k_warp(nvs + 256 * g, q + (long long)g * 292, lane);
    }
}

// rope_store_one: rope_pair's token 0 for x (heads) and x2 (heads2) and
// store_kv_pair's row rows[0] (k: the k rope's output out2, whose n values
// are the k store's source; v: vx) into the caches kc and vc (F16 when
// f16): block b < heads ropes head b of x, the next heads2 blocks the
// heads of x2 (and store them), the rest store headDim values of v each.
// A thread takes pairs k, k+nth, ... of its head: its loads first, then
// the CPU's theta recurrence and cos/sin (rope_pair's), the rotation. The
// caller guarantees that no output lies on another rope's input or on vx.
extern "C" __global__ void rope_store_one(const float* x, float* out, int heads, const float* x2, float* out2, int heads2, const int* pos,
                                          const float* freqs, int headDim, int dims, int neox, float freqScale, float thetaScale, void* kc,
                                          void* vc, const float* vx, const int* rows, int n, int ctx, int f16) { PDL_ENTRY();
    const int hp = headDim / 2, tid = threadIdx.x, nth = blockDim.x;
    const int r = rows[0];
    const bool st = r >= 0 && r < ctx;
    const int b = blockIdx.x;
    if (b >= heads + heads2) {
        if (!st) return;
        const int i0 = (b - heads - heads2) * headDim, i1 = min(n, i0 + headDim);
        for (int i = i0 + tid; i < i1; i += nth) {
            const float v = vx[i];
            if (f16) ((uint16_t*)vc)[(long long)r * n + i] = to_f16(v);
            else ((float*)vc)[(long long)r * n + i] = v;
        }
        return;
    }
    const bool isK = b >= heads;
    const long long off = (long long)(isK ? b - heads : b) * headDim;
    const float* X = (isK ? x2 : x) + off;
    float* O = (isK ? out2 : out) + off;
    const float p0 = (float)pos[0];
    for (int k = tid; k < hp; k += nth) {
        int a, c;
        float o0, o1;
        rope_pair_at(k, X, p0, freqs, dims, neox, freqScale, thetaScale, a, c, o0, o1);
        O[a] = o0;
        O[c] = o1;
        if (isK && st) {
            const long long ci = (long long)r * n + off;
            if (f16) {
                ((uint16_t*)kc)[ci + a] = to_f16(o0);
                ((uint16_t*)kc)[ci + c] = to_f16(o1);
            } else {
                ((float*)kc)[ci + a] = o0;
                ((float*)kc)[ci + c] = o1;
            }
        }
    }
}
