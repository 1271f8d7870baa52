// Prefill attention over the F16 K/V cache on the tensor cores: Q·Kᵀ and
// P·V by mma.sync m16n8k16 (F16 × F16 → F32), the default for head sizes
// 64 and 128 in models without quantized weights and for long batches in
// models with them (fattn.go's fattnMMAFor; fattn.cu's exact kernels
// otherwise or when asked for). Not bit for bit
// the CPU's, but its arithmetic where that arithmetic rounds to F16, so
// the rest differs only in the order of F32 additions (within the ops'
// NMSE bound, fattn_test.go):
//   - q rounded to F16 (as the CPU's dot products take it), K the F16
//     cache: each score the tensor cores' F32 sum of exact products, then
//     the CPU's soft-cap, scale and mask;
//   - pass 1: each row's maximum and its sum of expf16(s − max), online
//     (a thread's partial sum rescaled when its maximum grows, the four
//     threads of a row combined at the end), 1/sum in float64 as the
//     CPU's;
//   - pass 2: the scores again, the CPU's weights float(expf16(s − max) ·
//     (1/sum)) rounded to F16 (the CPU's F16 weights: the same rounding of
//     the same value up to the sum's last bits), and O += P·V on the
//     tensor cores with the F16 cache's V, F32 accumulation.
// A block takes 64 query rows of one KV head (q heads of a token
// consecutive: GQA shares every K/V tile among the group), four warps of
// 16 rows, and walks the cache in tiles of 64 positions, double-buffered
// through shared memory by cp.async; the fragments come by ldmatrix (V
// transposed). Pass 1 reads each tile's mask first and records which of
// its positions some row of the block sees (sSeen): tiles no row sees are
// skipped in both passes, and pass 2 loads zeros for the positions no row
// sees (cells that may hold anything, which the CPU's sums skip: a zero
// weight times a NaN would not be zero). Positions from n_kv on (attn_used,
// as the exact kernels) are not visited: the mask hides them from every
// row. Blocks run from the last query rows backwards (the causal mask
// gives those the most tiles).
#include "common.cuh"

#define FM_KV 64   // cache positions per tile
#define FM_ROWS 64 // query rows per block: 4 warps of 16
#define FM_THREADS 128

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
// cp16: 16 bytes from global to shared memory, asynchronously; zeros when
// !ok (src is then not read).
__device__ __forceinline__ void cp16(uint32_t dst, const void* src, bool ok) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(ok ? 16 : 0));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;"); }
__device__ __forceinline__ void cp_wait_all() { asm volatile("cp.async.wait_group 0;"); }
__device__ __forceinline__ void ldsm_x4(uint32_t* r, uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t* r, uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
// c += a·b: a 16×16 F16 (row), b 16×8 F16 (col), c 16×8 F32.
__device__ __forceinline__ void mma_f16(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ uint32_t pack_f16(__half lo, __half hi) {
    return (uint32_t)__half_as_ushort(lo) | ((uint32_t)__half_as_ushort(hi) << 16);
}

// soft_cap: the CPU's soft-cap of a score (out of line: float64 tanh).
__device__ __noinline__ float soft_cap(float v, float invCap, float softCap) { return __fmul_rn(cpu_tanhf(__fmul_rn(v, invCap)), softCap); }

// Fragment coordinates (PTX's m16n8k16 layouts): lane = 4g + t; element e
// of an accumulator tile n is row g + 8·(e>>1) of the warp's 16, position
// 8n + 2t + (e&1) of the tile.

// fm_mask: this thread's mask values of tile j0 (its rows' tokens tok[2]),
// −Inf from kvLen on; pairs: two at a time (kvLen even, the mask 8-byte
// aligned).
__device__ __forceinline__ void fm_mask(float (*mv)[4], const float* mask, const int* tok, int kvLen, int j0, int t4, bool pairs) {
#pragma unroll
    for (int n = 0; n < 8; n++)
#pragma unroll
        for (int r = 0; r < 2; r++) {
            int j = j0 + 8 * n + 2 * t4;
            const float* p = mask + (long long)tok[r] * kvLen + j;
            if (pairs) {
                float2 v = j < kvLen ? __ldg((const float2*)p) : make_float2(-INFINITY, -INFINITY);
                mv[n][2 * r] = v.x;
                mv[n][2 * r + 1] = v.y;
            } else {
                mv[n][2 * r] = j < kvLen ? __ldg(p) : -INFINITY;
                mv[n][2 * r + 1] = j + 1 < kvLen ? __ldg(p + 1) : -INFINITY;
            }
        }
}

// fm_scores: S = q·kᵀ of the warp's 16 rows (at sQ: its A fragments
// come by ldmatrix) and the 64 positions of the K tile at sK (row stride
// KS halves), then the CPU's soft-cap, scale and mask (mv); −Inf where the
// mask hides a position.
template <int HD>
__device__ __forceinline__ void fm_scores(float (*S)[4], uint32_t sQ, uint32_t sK, const float (*mv)[4], int lane, float scale,
                                          float softCap, float invCap) {
    constexpr int KS = HD + 8;
#pragma unroll
    for (int n = 0; n < 8; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) S[n][e] = 0.f;
#pragma unroll
    for (int k2 = 0; k2 < HD / 32; k2++) {
        uint32_t qa[2][4];
#pragma unroll
        for (int h = 0; h < 2; h++) ldsm_x4(qa[h], sQ + ((lane & 7) + 8 * ((lane >> 3) & 1)) * KS * 2 + (32 * k2 + 16 * h + 8 * (lane >> 4)) * 2);
#pragma unroll
        for (int n = 0; n < 8; n++) {
            uint32_t b[4];
            ldsm_x4(b, sK + ((8 * n + (lane & 7)) * KS + 32 * k2 + 8 * (lane >> 3)) * 2);
            mma_f16(S[n], qa[0], b[0], b[1]);
            mma_f16(S[n], qa[1], b[2], b[3]);
        }
    }
#pragma unroll
    for (int n = 0; n < 8; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            float m = mv[n][e], v = S[n][e];
            if (softCap > 0.f) v = soft_cap(v, invCap, softCap);
            S[n][e] = isinf(m) && m < 0.f ? -INFINITY : __fadd_rn(__fmul_rn(v, scale), m);
        }
}

// fattn_mma<HD>: q [T][heads][HD] float; caches [kvLen..][kvHeads·HD] F16
// (16-byte aligned); mask [T][kvLen]; used: the cells in use (attn_used);
// out like q. grid (ceil(T·group/64), kvHeads), 128 threads; dynamic
// shared memory fattnMMAShared(HD, kvLen) (fattn.go): two K and two V
// tiles and q's rows in F16, each 64 rows of HD + 8 halves, then a 64-bit
// seen mask per tile of the cache.
template <int HD>
__device__ void fattn_mma(const float* q, const __half* kc, const __half* vc, const float* mask, const int* usedp, float* out, int T, int heads,
                          int kvHeads, int kvLen, float scale, float softCap) {
    constexpr int KS = HD + 8, TILE = FM_KV * KS, CH = HD / 8; // tile row stride, tile halves, 16-byte chunks a row
    extern __shared__ __align__(16) uint8_t fm_smem[];
    __half* sK = (__half*)fm_smem; // [2][64][KS]
    __half* sV = sK + 2 * TILE;    // [2][64][KS]
    __half* sQ = sV + 2 * TILE;    // [64][KS]
    unsigned long long* sSeen = (unsigned long long*)(sQ + TILE);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t4 = lane & 3;
    const int group = heads / kvHeads, kvh = blockIdx.y;
    const int flat0 = (gridDim.x - 1 - blockIdx.x) * FM_ROWS;
    const long long kvRow = (long long)kvHeads * HD;
    const __half* kbase = kc + (long long)kvh * HD;
    const __half* vbase = vc + (long long)kvh * HD;
    const int used = *usedp;
    const int nkv = min(kvLen, max(32, (used + 31) / 32 * 32));
    const int nT = (nkv + FM_KV - 1) / FM_KV;
    const float invCap = softCap > 0.f ? __fdiv_rn(1.f, softCap) : 0.f;
    const bool pairs = kvLen % 2 == 0 && (size_t)mask % 8 == 0;

    // q rounded to F16 (rows past the batch: zeros).
    for (int i = tid; i < FM_ROWS * HD; i += FM_THREADS) {
        int r = i / HD, d = i % HD, flat = flat0 + r, t = flat / group, h = kvh * group + flat % group;
        sQ[r * KS + d] = __float2half_rn(t < T ? q[((long long)t * heads + h) * HD + d] : 0.f);
    }
    for (int i = tid; i < nT; i += FM_THREADS) sSeen[i] = 0ull;
    __syncthreads();
    const uint32_t sQw = smem_addr(sQ + 16 * warp * KS); // this warp's rows
    // This thread's rows g and g+8: their tokens (the batch's last for
    // rows past it, whose mask is read but whose output is not written).
    int tok[2], hq[2];
#pragma unroll
    for (int r = 0; r < 2; r++) {
        int flat = flat0 + 16 * warp + g + 8 * r;
        tok[r] = min(flat / group, T - 1);
        hq[r] = flat / group < T ? kvh * group + flat % group : -1;
    }

    // load: the K (and V) tile of positions j0.. into buffer b; positions
    // from kvLen on (and, with seen, those no row sees) as zeros.
    auto load = [&](int j0, int b, bool withV, unsigned long long seen) {
        uint32_t dk = smem_addr(sK + b * TILE), dv = smem_addr(sV + b * TILE);
        for (int c = tid; c < FM_KV * CH; c += FM_THREADS) {
            int row = c / CH, ch = c % CH, j = j0 + row;
            bool ok = withV ? (seen >> row & 1ull) != 0 : j < kvLen;
            long long off = (ok ? j : 0) * kvRow + 8 * ch;
            uint32_t so = (row * KS + 8 * ch) * 2;
            cp16(dk + so, kbase + off, ok);
            if (withV) cp16(dv + so, vbase + off, ok);
        }
        cp_commit();
    };

    float S[8][4], mv[8][4];
    // Pass 1: row maxima and sums, per thread over its columns.
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
    if (nT > 0) load(0, 0, false, 0);
    for (int i = 0; i < nT; i++) {
        fm_mask(mv, mask, tok, kvLen, FM_KV * i, t4, pairs);
        uint32_t lo = 0, hi = 0;
#pragma unroll
        for (int n = 0; n < 8; n++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                bool seen = !(isinf(mv[n][e]) && mv[n][e] < 0.f);
                uint32_t bit = (uint32_t)seen << ((8 * n + 2 * t4 + (e & 1)) & 31);
                if (n < 4) lo |= bit;
                else hi |= bit;
            }
        lo = __reduce_or_sync(0xffffffffu, lo);
        hi = __reduce_or_sync(0xffffffffu, hi);
        if (lane == 0 && (lo | hi)) atomicOr(sSeen + i, (unsigned long long)hi << 32 | lo);
        cp_wait_all();
        __syncthreads(); // tile i's K is in, sSeen[i] complete, tile i−1's buffer free
        if (i + 1 < nT) load(FM_KV * (i + 1), (i + 1) & 1, false, 0);
        if (sSeen[i] == 0ull) continue;
        fm_scores<HD>(S, sQw, smem_addr(sK + (i & 1) * TILE), mv, lane, scale, softCap, invCap);
#pragma unroll
        for (int r = 0; r < 2; r++) {
            float tm = -INFINITY;
#pragma unroll
            for (int n = 0; n < 8; n++) tm = fmaxf(tm, fmaxf(S[n][2 * r], S[n][2 * r + 1]));
            if (tm == -INFINITY) continue;
            float mn = fmaxf(m[r], tm);
            float acc = __fmul_rn(l[r], expf16(__fsub_rn(m[r], mn)));
#pragma unroll
            for (int n = 0; n < 8; n++) {
                acc = __fadd_rn(acc, expf16(__fsub_rn(S[n][2 * r], mn)));
                acc = __fadd_rn(acc, expf16(__fsub_rn(S[n][2 * r + 1], mn)));
            }
            m[r] = mn;
            l[r] = acc;
        }
    }
    // A row's maximum and 1/sum over its four threads (a row no position
    // is seen by gets zero weights).
    float rm[2], inv[2];
#pragma unroll
    for (int r = 0; r < 2; r++) {
        float mx = fmaxf(m[r], __shfl_xor_sync(0xffffffffu, m[r], 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        float s = m[r] == -INFINITY ? 0.f : __fmul_rn(l[r], expf16(__fsub_rn(m[r], mx)));
        s = __fadd_rn(s, __shfl_xor_sync(0xffffffffu, s, 1));
        s = __fadd_rn(s, __shfl_xor_sync(0xffffffffu, s, 2));
        rm[r] = mx == -INFINITY ? 0.f : mx;
        inv[r] = (float)(1.0 / (double)s);
    }

    // Pass 2: the weights and P·V over the tiles some row sees.
    float O[HD / 8][4];
#pragma unroll
    for (int n = 0; n < HD / 8; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) O[n][e] = 0.f;
    cp_wait_all();
    __syncthreads(); // pass 1's buffers free
    int cur = 0;
    while (cur < nT && sSeen[cur] == 0ull) cur++;
    if (cur < nT) load(FM_KV * cur, 0, true, sSeen[cur]);
    for (int b = 0; cur < nT; b ^= 1) {
        int nxt = cur + 1;
        while (nxt < nT && sSeen[nxt] == 0ull) nxt++;
        fm_mask(mv, mask, tok, kvLen, FM_KV * cur, t4, pairs);
        cp_wait_all();
        __syncthreads(); // tile cur is in, the other buffer free
        if (nxt < nT) load(FM_KV * nxt, b ^ 1, true, sSeen[nxt]);
        fm_scores<HD>(S, sQw, smem_addr(sK + b * TILE), mv, lane, scale, softCap, invCap);
        // The weights as A fragments: positions 16kk.. of the tile.
        uint32_t pa[4][4];
#pragma unroll
        for (int n = 0; n < 8; n++)
#pragma unroll
            for (int r = 0; r < 2; r++) {
                __half w[2];
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    float e = expf16(__fsub_rn(S[n][2 * r + c], rm[r]));
                    w[c] = e != 0.f ? __float2half_rn(__fmul_rn(e, inv[r])) : __float2half_rn(0.f);
                }
                pa[n >> 1][2 * (n & 1) + r] = pack_f16(w[0], w[1]);
            }
        const uint32_t sVb = smem_addr(sV + b * TILE);
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
#pragma unroll
            for (int np = 0; np < HD / 16; np++) {
                uint32_t v[4];
                ldsm_x4_t(v, sVb + ((16 * kk + (lane & 7) + 8 * ((lane >> 3) & 1)) * KS + 16 * np + 8 * (lane >> 4)) * 2);
                mma_f16(O[2 * np], pa[kk], v[0], v[1]);
                mma_f16(O[2 * np + 1], pa[kk], v[2], v[3]);
            }
        cur = nxt;
    }
#pragma unroll
    for (int r = 0; r < 2; r++) {
        if (hq[r] < 0) continue;
        float* o = out + ((long long)tok[r] * heads + hq[r]) * HD + 2 * t4;
#pragma unroll
        for (int n = 0; n < HD / 8; n++) {
            o[8 * n] = O[n][2 * r];
            o[8 * n + 1] = O[n][2 * r + 1];
        }
    }
}

// Two blocks an SM (at most 255 registers a thread).
#define FATTN_MMA(name, hd) \
    extern "C" __global__ void __launch_bounds__(FM_THREADS, 2) name(const float* q, const __half* kc, const __half* vc, const float* mask, \
                                                                    const int* used, float* out, int T, int heads, int kvHeads, int kvLen, \
                                                                    float scale, float softCap) { PDL_ENTRY(); \
        fattn_mma<hd>(q, kc, vc, mask, used, out, T, heads, kvHeads, kvLen, scale, softCap); }
FATTN_MMA(fattn_mma_64, 64) FATTN_MMA(fattn_mma_128, 128)
