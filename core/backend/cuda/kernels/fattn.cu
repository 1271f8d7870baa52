// Prefill attention over the F16 K/V cache, flash style: a block takes 64
// query rows (the q heads of one KV head, flattened over consecutive
// tokens: GQA shares each K/V tile among the group) and walks the cache in
// tiles of 64 positions through shared memory; tiles the mask hides from
// every row of the block are skipped (causal prefill). Two passes over the
// tiles: the first finds each row's maximum and exp-sum (online), the
// second forms the weights as the CPU does (exp(s−max)·(1/sum) rounded to
// F16, q rounded to F16 too) and accumulates them times V. Scores: q·k in
// float32, soft-capped (Gemma 2), scaled, plus the mask. The sums run in
// another order than the CPU's: results agree within rounding (the op
// tests bound the NMSE), not bit for bit.
#include "common.cuh"

#define FA_ROWS 64 // query rows per block: 8 warps × 8 rows
#define FA_KV 64   // cache positions per tile

// fattn<HD>: q [T][heads][HD] float; caches [kvLen..][kvHeads·HD] F16;
// mask [T][kvLen]; out like q. grid (ceil(T·group/64), kvHeads), 256
// threads; dynamic shared memory fattnShared(HD) (mirrored in fattn.go):
// q and a K tile as float, a V tile as F16, each warp's weights.
template <int HD>
__device__ void fattn(const float* q, const __half* kc, const __half* vc, const float* mask, float* out, int T, int heads, int kvHeads, int kvLen,
                      float scale, float softCap) {
    constexpr int KS = HD + 4, ND = HD / 32;
    extern __shared__ __align__(16) uint8_t fa_smem[];
    float* sQ = (float*)fa_smem;               // [64][HD], q rounded to F16
    float* sK = sQ + FA_ROWS * HD;             // [64][KS] (padded: 16-byte reads of a quarter warp hit distinct banks)
    __half* sV = (__half*)(sK + FA_KV * KS);   // [64][HD]
    float* sP = (float*)(sV + FA_KV * HD);     // [8 warps][8 rows][64]
    int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    int group = heads / kvHeads, kvh = blockIdx.y;
    int flat0 = blockIdx.x * FA_ROWS;
    long long kvRow = (long long)kvHeads * HD;
    const __half* kbase = kc + (long long)kvh * HD;
    const __half* vbase = vc + (long long)kvh * HD;

    for (int i = tid; i < FA_ROWS * HD / 2; i += blockDim.x) {
        int r = i / (HD / 2), d2 = i % (HD / 2), flat = flat0 + r, t = flat / group, h = kvh * group + flat % group;
        float2 v = make_float2(0.f, 0.f);
        if (t < T) v = *(const float2*)(q + ((long long)t * heads + h) * HD + 2 * d2);
        *(float2*)(sQ + r * HD + 2 * d2) = __half22float2(__floats2half2_rn(v.x, v.y));
    }
    // This warp's 8 rows: token, validity.
    int tok[8];
    bool ok[8];
#pragma unroll
    for (int r = 0; r < 8; r++) {
        int flat = flat0 + warp * 8 + r;
        tok[r] = flat / group;
        ok[r] = tok[r] < T;
    }
    int tFirst = flat0 / group, tLast = min(T - 1, (flat0 + FA_ROWS - 1) / group);
    float m[8], l[8], inv[8], o[8][ND];
#pragma unroll
    for (int r = 0; r < 8; r++) {
        m[r] = -INFINITY;
        l[r] = 0.f;
#pragma unroll
        for (int i = 0; i < ND; i++) o[r][i] = 0.f;
    }
    float* P = sP + warp * 8 * FA_KV;
    float invCap = softCap > 0.f ? 1.f / softCap : 0.f;

    for (int pass = 0; pass < 2; pass++) {
        for (int j0 = 0; j0 < kvLen; j0 += FA_KV) {
            // Skip tiles no row of the block sees.
            bool seen = false;
            int nt = tLast - tFirst + 1;
            for (int i = tid; i < nt * FA_KV; i += blockDim.x) {
                int t = tFirst + i / FA_KV, j = j0 + i % FA_KV;
                if (j < kvLen) {
                    float mv = mask[(long long)t * kvLen + j];
                    seen |= !(isinf(mv) && mv < 0.f);
                }
            }
            if (!__syncthreads_or(seen)) continue;
            for (int i = tid; i < FA_KV * HD / 2; i += blockDim.x) {
                int kk = i / (HD / 2), d2 = i % (HD / 2), j = j0 + kk;
                __half2 kv2 = __floats2half2_rn(0.f, 0.f), vv2 = kv2;
                if (j < kvLen) {
                    kv2 = *(const __half2*)(kbase + j * kvRow + 2 * d2);
                    if (pass) vv2 = *(const __half2*)(vbase + j * kvRow + 2 * d2);
                }
                *(float2*)(sK + kk * KS + 2 * d2) = __half22float2(kv2);
                if (pass) *(__half2*)(sV + kk * HD + 2 * d2) = vv2;
            }
            __syncthreads();
            // Scores of this warp's 8 rows at positions lane and lane+32.
            float s[8][2];
#pragma unroll
            for (int r = 0; r < 8; r++) s[r][0] = s[r][1] = 0.f;
            const float* q8 = sQ + warp * 8 * HD;
#pragma unroll 2
            for (int d = 0; d < HD; d += 4) {
                float4 k0 = *(const float4*)(sK + lane * KS + d), k1 = *(const float4*)(sK + (lane + 32) * KS + d);
#pragma unroll
                for (int r = 0; r < 8; r++) {
                    float4 qq = *(const float4*)(q8 + r * HD + d);
                    s[r][0] += qq.x * k0.x + qq.y * k0.y + qq.z * k0.z + qq.w * k0.w;
                    s[r][1] += qq.x * k1.x + qq.y * k1.y + qq.z * k1.z + qq.w * k1.w;
                }
            }
#pragma unroll
            for (int r = 0; r < 8; r++)
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    int j = j0 + lane + 32 * c;
                    float v = -INFINITY;
                    if (ok[r] && j < kvLen) {
                        float mv = mask[(long long)tok[r] * kvLen + j];
                        v = s[r][c];
                        if (softCap > 0.f) v = tanhf(v * invCap) * softCap;
                        v = v * scale + mv;
                    }
                    s[r][c] = v;
                }
            if (pass == 0) {
#pragma unroll
                for (int r = 0; r < 8; r++) {
                    float mt = warp_max(fmaxf(s[r][0], s[r][1]));
                    float mn = fmaxf(m[r], mt);
                    if (mn == -INFINITY) continue;
                    float e = __expf(s[r][0] - mn) + __expf(s[r][1] - mn);
                    l[r] = l[r] * __expf(m[r] - mn) + warp_sum(e);
                    m[r] = mn;
                }
            } else {
#pragma unroll
                for (int r = 0; r < 8; r++)
#pragma unroll
                    for (int c = 0; c < 2; c++) {
                        float p = s[r][c] == -INFINITY ? 0.f : __half2float(__float2half_rn(__expf(s[r][c] - m[r]) * inv[r]));
                        P[r * FA_KV + lane + 32 * c] = p;
                    }
                __syncwarp();
#pragma unroll 2
                for (int kk = 0; kk < FA_KV; kk += 4) {
                    float4 p4[8];
#pragma unroll
                    for (int r = 0; r < 8; r++) p4[r] = *(const float4*)(P + r * FA_KV + kk);
#pragma unroll
                    for (int jj = 0; jj < 4; jj++) {
                        float vv[ND];
#pragma unroll
                        for (int i = 0; i < ND; i++) vv[i] = __half2float(sV[(kk + jj) * HD + lane + 32 * i]);
#pragma unroll
                        for (int r = 0; r < 8; r++) {
                            float pr = jj == 0 ? p4[r].x : jj == 1 ? p4[r].y : jj == 2 ? p4[r].z : p4[r].w;
#pragma unroll
                            for (int i = 0; i < ND; i++) o[r][i] += pr * vv[i];
                        }
                    }
                }
            }
            __syncthreads();
        }
        if (pass == 0) {
#pragma unroll
            for (int r = 0; r < 8; r++) inv[r] = l[r] > 0.f ? 1.f / l[r] : 0.f;
        }
    }
#pragma unroll
    for (int r = 0; r < 8; r++) {
        if (!ok[r]) continue;
        int flat = flat0 + warp * 8 + r, h = kvh * group + flat % group;
        float* orow = out + ((long long)tok[r] * heads + h) * HD;
#pragma unroll
        for (int i = 0; i < ND; i++) orow[lane + 32 * i] = o[r][i];
    }
}

#define FATTN(hd) \
    extern "C" __global__ void __launch_bounds__(256) fattn_f16_##hd(const float* q, const __half* kc, const __half* vc, const float* mask, float* out, int T, \
                                                                    int heads, int kvHeads, int kvLen, float scale, float softCap) { \
        fattn<hd>(q, kc, vc, mask, out, T, heads, kvHeads, kvLen, scale, softCap); }
FATTN(64) FATTN(96) FATTN(128) FATTN(256)
