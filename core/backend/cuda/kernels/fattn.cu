// Prefill attention over the F16 K/V cache, flash style, bit for bit the
// CPU's (core/backend/cpu ops.go and ggml512.go; the same arithmetic as
// attention_f16 in ops.cu): a block takes FA_R(HD) query rows (q heads of
// one KV head, flattened over consecutive tokens: GQA shares each K/V tile
// among the group) and walks the cache in tiles of 64 positions through
// shared memory; tiles the mask hides from every row of the block are
// skipped (their weights are exactly zero, which the CPU's sums skip or
// add as zero). Only the parallel structure differs from attention_f16;
// every chain of float operations is the CPU's:
//   - each score a 64-lane F16 dot (q rounded to F16; one thread, or two
//     that each take the eight lanes reduce_add16 adds first and exchange
//     the four sums that follow, or — OCT, the kernels of two and four rows
//     at head sizes 64 and 128 — eight threads a position, each two lanes
//     of all the rows' scores, q in registers, exchanging the sums of the
//     tree's upper levels), soft-cap, scale, mask;
//   - pass 0: the scores (kept in shared memory where they fit) and each
//     row's maximum (order-free);
//   - pass 1: expf16(s − max) per position, each 16-block's sum by
//     reduce_add16, the blocks added in float64 in position order;
//   - pass 2: the weights float(e·(1/sum)) rounded to F16, and P·V: each
//     output element's 64 lane chains (position j feeds chain j mod 64,
//     positions in order, zero weights skipped) up to the padded length's
//     64-multiple, the rest in float64 in order; a thread owns its chains
//     across all tiles (tiles are 64-aligned: a tile adds one term to each
//     chain), and the chains are combined as the CPU's reduction at the end.
// Every product in the dots is of two F16 values, exact in float, so a
// product and the add after it are one fused multiply-add with the CPU's
// bits. The padded length n_kv comes from attn_used (the cells in use), as
// for attention_f16.
//
// With the scores kept, pass 1 is no tile loop: all threads take the
// 16-blocks of the seen tiles (exps in place, block sums), then the rows'
// float64 sums, then the weights in place, which pass 2 reads; without,
// passes 1 and 2 load K and compute the scores again.
//
// Latency: the block reads the mask once, up front, into a bit per tile
// (seen by some row), so the passes walk only those tiles and read no
// mask to decide; the next tile's K and V halves are in flight (cp.async,
// 16 bytes a copy where both caches' rows are 16-byte aligned, else 4)
// while this tile's scores and values are computed, and so is each
// scorer's mask value for it.
#include "common.cuh"

#define FA_KV 64 // cache positions per tile

// FA_R(HD, NT): query rows per block of NT threads, so that rows × HD =
// NT output elements (96: 192 of 256) and each thread owns 64 (48) chains
// in registers: 256 threads (4 rows at head size 64, 2 at 96 and 128, 1
// at 256), or 512 threads at head size 128 (4 rows: each K/V tile a block
// loads serves twice the rows).
#define FA_R(HD, NT) ((HD) == 64 ? 4 : (HD) == 256 ? 1 : (NT) / 128)

__device__ __forceinline__ void fa_cp4(void* dst, const void* src) {
    uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d), "l"(src));
}
__device__ __forceinline__ void fa_cp16(void* dst, const void* src) {
    uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src));
}
__device__ __forceinline__ void fa_commit() { asm volatile("cp.async.commit_group;"); }
__device__ __forceinline__ void fa_wait0() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }

// fa_next_seen is the first tile after t whose bit is set in seen (a bit a
// tile), or -1.
__device__ __forceinline__ int fa_next_seen(const uint32_t* seen, int t, int nTiles) {
    for (t++; t < nTiles;) {
        uint32_t w = seen[t >> 5] >> (t & 31);
        if (w) {
            t += __ffs(w) - 1;
            return t < nTiles ? t : -1;
        }
        t = (t | 31) + 1;
    }
    return -1;
}

// fa_lanes4: lanes l0..l0+3 of a score's 16 (v[e]: lane l0+e). Chain
// (l, g) sums the products d = l + 16g + 64i in order of i (the head's
// first NPK elements), then the four groups are added as the CPU adds
// them; 16-byte reads cover four lanes of one group. Every product is of
// two F16 values, exact in float, so a product and its add are one FMA.
template <int NPK>
__device__ __forceinline__ void fa_lanes4(const float* qh, const float* kr, int l0, float* v) {
    float a[4][4];
#pragma unroll
    for (int g = 0; g < 4; g++)
#pragma unroll
        for (int e = 0; e < 4; e++) a[g][e] = 0.f;
#pragma unroll
    for (int i = 0; i < NPK; i += 64)
#pragma unroll
        for (int g = 0; g < 4; g++) {
            float4 q4 = *(const float4*)(qh + i + 16 * g + l0), k4 = *(const float4*)(kr + i + 16 * g + l0);
            a[g][0] = __fmaf_rn(q4.x, k4.x, a[g][0]);
            a[g][1] = __fmaf_rn(q4.y, k4.y, a[g][1]);
            a[g][2] = __fmaf_rn(q4.z, k4.z, a[g][2]);
            a[g][3] = __fmaf_rn(q4.w, k4.w, a[g][3]);
        }
#pragma unroll
    for (int e = 0; e < 4; e++) v[e] = __fadd_rn(__fadd_rn(a[0][e], a[2][e]), __fadd_rn(a[1][e], a[3][e]));
}

// fattn<HD, NT>: q [T][heads][HD] float; caches [kvLen..][kvHeads·HD] F16;
// mask [T][kvLen]; used: the cells in use (attn_used); out like q. grid
// (ceil(T·group/R), kvHeads), NT threads; dynamic shared memory
// fattnShared(HD, R) + fattnSeenShared(kvLen) (+ fattnKeepShared when
// keep; mirrored in fattn.go).
template <int HD, int NT>
__device__ void fattn(const float* q, const __half* kc, const __half* vc, const float* mask, const int* usedp, float* out, int T, int heads,
                      int kvHeads, int kvLen, float scale, float softCap, int keep) {
    constexpr int R = FA_R(HD, NT);
    // SPLIT: two threads a score (the block has a thread pair for each of
    // its R·64 scores of a tile), each the products of eight of the 16
    // lanes: {4h..4h+3, 8+4h..8+4h+3}, the lanes reduce_add16 adds first.
    // OCT: a score's 16 lanes spread over eight threads and each thread
    // takes all R rows (R of 4: head size 64 on 256 threads, 128 on 512;
    // R of 2: head size 128 on 256): thread (position, ql) holds lanes ql
    // and ql+8 — the pair the CPU's reduce_add16 adds first — of the R
    // rows' scores of its position, so one K value it loads serves R rows,
    // and the block's q rows it needs (R·HD/8 values) sit in registers
    // through pass 0. The rest of the tree crosses threads (shuffles: the
    // eight exchange the sums of their rows until each holds one row's
    // score: row ql/2 of four, ql/4 of two). PPT: the positions of a tile
    // a thread takes (64·8/NT).
    constexpr bool OCT = (R == 4 || R == 2) && HD % 64 == 0;
    constexpr int PPT = OCT ? FA_KV * 8 / NT : 1;
    static_assert(!OCT || PPT * NT == FA_KV * 8, "OCT: eight threads a position");
    constexpr bool SPLIT = !OCT && NT >= 2 * R * FA_KV;
    // Tile row strides: the 16-byte reads of a quarter warp hit distinct
    // banks: 8 consecutive positions, rows four banks apart; split, 4
    // positions × the pair's two 16-byte reads, rows eight banks apart;
    // OCT, a warp's four positions × eight consecutive lanes, rows eight
    // banks apart.
    constexpr int KS = SPLIT || OCT ? HD + 8 : HD + 4; // K tile (floats)
    constexpr int VS = HD + 8; // V tiles (halves)
    constexpr int CELLS = R * HD;            // output elements
    constexpr int NPART = NT / FA_KV;        // P·V: thread groups of 64 lanes
    constexpr int CPD = HD / NPART;          // P·V: each thread's elements of a row (for all R rows)
    constexpr int LS = 65;                   // chain store stride at the end
    static_assert(CPD % 8 == 0, "P·V reads 8 halves at a time");
    // The K tile (float), two V tiles (this one and the next in flight) and
    // the next K tile's halves as copied.
    constexpr int TILES_BYTES = FA_KV * KS * 4 + 2 * FA_KV * VS * 2 + FA_KV * HD * 2;
    constexpr int CHAIN_BYTES = CELLS * LS * 4;
    constexpr int A_BYTES = ((TILES_BYTES > CHAIN_BYTES ? TILES_BYTES : CHAIN_BYTES) + 15) / 16 * 16;
    // DBK (the 512-thread kernel, fattn_f16_128w): a second float K tile
    // after the tiles, in the room the chain store takes only at the end
    // (no more shared memory): a tile's K is converted into K buffer vb
    // (alternating with the V buffers) while the scores of the tile before
    // may still read the other, so pass 0 needs no barrier at a tile's end
    // (see the loop's end).
    constexpr bool DBK = NT == 512 && TILES_BYTES + FA_KV * KS * 4 <= CHAIN_BYTES;
    static_assert(!DBK || A_BYTES >= TILES_BYTES + FA_KV * KS * 4, "the second K tile fits in the chain store's room");
    static_assert(!DBK || TILES_BYTES % 16 == 0, "the second K tile 16-byte aligned");
    constexpr int NH2 = FA_KV * HD / 2;      // half pairs a tile
    constexpr int NC16 = FA_KV * HD / 8 / NT; // 16-byte chunks a tile a thread
    static_assert(NC16 * NT * 8 == FA_KV * HD, "16-byte chunks split evenly");
    extern __shared__ __align__(16) uint8_t fa_smem[];
    float* sK = (float*)fa_smem;                    // [64][KS] (DBK: K buffer 0)
    float* sK1 = DBK ? (float*)(fa_smem + TILES_BYTES) : sK; // DBK: K buffer 1 [64][KS], after the tiles
    __half* sV0 = (__half*)(sK + FA_KV * KS);       // [2][64][VS]
    __half* sKh = sV0 + 2 * FA_KV * VS;             // [64][HD]
    float* sL = (float*)fa_smem;                    // [CELLS][LS], after the tiles
    float* sQ = (float*)(fa_smem + A_BYTES);        // [R][HD], q rounded to F16
    float* sS = sQ + R * HD;                        // [R][64] scores, exps, weights
    float* sM = sS + R * FA_KV;                     // [R] row maxima
    float* sInv = sM + R;                           // [R] 1/sum
    double* sSum = (double*)(sInv + R);             // [R] (8-aligned: an even count of floats before it)
    const int nTiles = (kvLen + FA_KV - 1) / FA_KV;
    uint32_t* sSeen = (uint32_t*)(sSum + R);        // [(nTiles+31)/32] a bit a tile some row sees
    // keep: the scores of pass 0 stay in shared memory ([R][kvLen rounded
    // up to 64], after sSeen); the softmax then turns them in place into
    // the exps and the weights, and the P·V pass reads those (the same
    // values: the same operations on the same inputs). Without keep,
    // passes 1 and 2 load K and compute the scores again.
    const int kvP = nTiles * FA_KV;
    float* sKeep = (float*)(sSeen + (nTiles + 31) / 32);
    int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    // Longest blocks first: under a causal mask the blocks of the last
    // query rows walk the most tiles, so the grid's blocks, dispatched in
    // order of their linear index (x fastest), take the rows from the last
    // to the first, the KV heads interleaved (linear index L: KV head L mod
    // gridDim.y, row block gridDim.x−1 − L / gridDim.y), and the short
    // blocks fill the tail of the last wave. Any bijection gives the same
    // bits: a block's output depends only on its (row block, KV head).
    const unsigned lin = blockIdx.y * gridDim.x + blockIdx.x;
    int group = heads / kvHeads, kvh = lin % gridDim.y;
    int flat0 = (gridDim.x - 1 - lin / gridDim.y) * R;
    long long kvRow = (long long)kvHeads * HD;
    const __half* kbase = kc + (long long)kvh * HD;
    const __half* vbase = vc + (long long)kvh * HD;
    // Both caches' rows of this head 16-byte aligned: the tiles are copied
    // 16 bytes at a time (else 4).
    const bool al16 = ((((uintptr_t)kbase) | ((uintptr_t)vbase)) & 15) == 0 && (kvRow & 7) == 0;
    // This thread's 16-byte chunks of a tile (al16), addressed once here,
    // not in every tile: chunk n is i = tid + n·NT of the tile's
    // 64·HD/8, position ck(n) = i / CPR, halves cd(n) = i % CPR · 8 of it.
    // Where NT is a multiple of CPR (all head sizes but 96), chunk n is
    // RPN positions after chunk 0 at the same halves: its cache address is
    // chunk 0's plus n·cgStep, its tile offsets chunk 0's plus constants.
    // The K halves of chunk n sit at 8·i in sKh (rows of HD, no padding).
    constexpr int CPR = HD / 8;
    constexpr bool UNI = NT % CPR == 0;
    constexpr int RPN = UNI ? NT / CPR : 0;
    const int ck0 = tid / CPR, cd0h = tid % CPR * 8;
    const long long cg0 = (long long)ck0 * kvRow + cd0h, cgStep = (long long)RPN * kvRow;
    const __half* kc0 = kbase + cg0;
    const __half* vc0 = vbase + cg0;
    const int cV0 = ck0 * VS + cd0h, cK0 = ck0 * KS + cd0h;
    auto ck = [&](int n) { return UNI ? ck0 + n * RPN : (int)((unsigned)(tid + n * NT) / CPR); };
    auto cd = [&](int n) { return UNI ? cd0h : (int)((unsigned)(tid + n * NT) % CPR * 8); };
    auto cVoff = [&](int n) { return UNI ? cV0 + n * RPN * VS : ck(n) * VS + cd(n); };
    auto cKoff = [&](int n) { return UNI ? cK0 + n * RPN * KS : ck(n) * KS + cd(n); };

    for (int i = tid; i < (nTiles + 31) / 32; i += NT) sSeen[i] = 0;
    // The tiles some row of the block sees: the mask rows of its tokens,
    // four loads in flight a thread; the first four in flight with the q
    // values and the cells in use (one round trip to global memory, not
    // three, before the first barrier).
    int tFirst = flat0 / group, tLast = min(T - 1, (flat0 + R - 1) / group);
    const int total = (tLast - tFirst + 1) * kvLen;
    const float* m0 = mask + (long long)tFirst * kvLen;
    float mv[4];
    auto maskLoads = [&](int i0) {
#pragma unroll
        for (int u = 0; u < 4; u++) {
            int i = i0 + u * NT + tid;
            mv[u] = i < total ? m0[i] : -INFINITY;
        }
    };
    maskLoads(0);
    int used = *usedp;
    for (int i = tid; i < R * HD; i += NT) {
        int r = i / HD, d = i % HD, flat = flat0 + r, t = flat / group, h = kvh * group + flat % group;
        float v = 0.f;
        if (t < T) v = q[((long long)t * heads + h) * HD + d];
        sQ[i] = __half2float(__float2half_rn(v));
    }
    if (tid < R) {
        sM[tid] = -INFINITY;
        sSum[tid] = 0.0;
    }
    __syncthreads();
    for (int i0 = 0; i0 < total; i0 += 4 * NT) {
        if (i0 > 0) maskLoads(i0);
#pragma unroll
        for (int u = 0; u < 4; u++) {
            int i = i0 + u * NT + tid, tile = (i % kvLen) / FA_KV;
            if (!(isinf(mv[u]) && mv[u] < 0.f) && !(sSeen[tile >> 5] & (1u << (tile & 31)))) atomicOr(&sSeen[tile >> 5], 1u << (tile & 31));
        }
    }
    int nkv = max(32, (used + 31) / 32 * 32);
    int npV = nkv & ~63;
    // This thread's score: row sr, tile position sj (threads from R·64 on
    // compute none), split: half sh of it (threads from 2·R·64 on none);
    // OCT: lanes ql and ql+8 of all rows at positions sj + p·NT/8 (p <
    // PPT), ending with row sr's, which one of the threads holding it
    // (sh == 0) writes.
    const int ql = tid & 7;
    const int sr = OCT ? (R == 4 ? ql >> 1 : ql >> 2) : SPLIT ? tid / (2 * FA_KV) : tid / FA_KV;
    const int sj = OCT ? tid >> 3 : SPLIT ? (tid >> 1) % FA_KV : tid % FA_KV;
    const int sh = OCT ? (R == 4 ? ql & 1 : ql & 3) : SPLIT ? tid & 1 : 0;
    constexpr int PSTEP = FA_KV / PPT; // OCT: position p of a tile is sj + p·PSTEP
    bool scorer = sr < R;
    int stok = scorer ? (flat0 + sr) / group : 0;
    bool sok = scorer && stok < T;
    const float* mrow = mask + (long long)stok * kvLen + sj; // the scorer's mask row, at its tile position
    // This thread's P·V chains: lane cm of elements cd0 … cd0+CPD-1 of
    // every row (each V value read and converted once for the R rows).
    const int cm = tid % FA_KV, cd0 = tid / FA_KV * CPD;
    float acc[R][CPD];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int c = 0; c < CPD; c++) acc[r][c] = 0.f;
    // The tail (positions from npV on): thread tid < CELLS owns element
    // (tid / HD, tid % HD).
    double tail = 0.0;
    float invCap = softCap > 0.f ? __fdiv_rn(1.f, softCap) : 0.f;
    // This scorer's running maximum over the tiles (pass 0).
    float rmax = -INFINITY;
    __syncthreads();
    const int first = nTiles == 0 ? -1 : (sSeen[0] & 1u) ? 0 : fa_next_seen(sSeen, 0, nTiles);
    // OCT: this thread's q values, [r][i][g][h] = q row r, element
    // ql + 8h + 16g + 64i, in registers for pass 0 (the passes are
    // unrolled: in passes 1 and 2, which compute scores only without keep,
    // they come from shared memory, the registers then holding the P·V
    // chains).
    constexpr int NI = HD / 64;
    float qreg[OCT ? R * NI * 8 : 1];
    if (OCT) {
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int i = 0; i < NI; i++)
#pragma unroll
                for (int g = 0; g < 4; g++)
#pragma unroll
                    for (int h = 0; h < 2; h++) qreg[((r * NI + i) * 4 + g) * 2 + h] = sQ[r * HD + ql + 8 * h + 16 * g + 64 * i];
    }

    constexpr int PASSES_UNROLLED = OCT ? 3 : 1;
#pragma unroll PASSES_UNROLLED
    for (int pass = 0; pass < 3; pass++) {
        if (keep && pass == 1) {
            // The softmax of the kept scores, all threads over the seen
            // tiles: each 16-block's exps (in place) and their sum
            // (reduce_add16, into the free tile area), then per row the
            // blocks added in float64 in position order, then the weights.
            float* sBS = (float*)fa_smem; // [R][nTiles·4]
            const int nb = nTiles * 4;
            // The exps, a position a thread (in place), and each 16-block's
            // sum by the 16 lanes holding it, reduce_add16's tree as
            // shuffles (lanes l and l+8 apart, then 4, 2, 1). An unseen
            // tile's sums are zero: adding them to the non-negative float64
            // sum below changes no bit, and that sum then walks every block
            // at a fixed stride, its loads in flight ahead of the adds. (A
            // warp's 32 positions lie in one tile: kvP and NT are multiples
            // of 64.)
#pragma unroll
            for (int r = 0; r < R; r++)
                for (int j0 = 0; j0 < kvP; j0 += NT) {
                    if (j0 + (tid & ~31) >= kvP) continue;
                    const int j = j0 + tid, tl = (unsigned)j / FA_KV;
                    float e = 0.f;
                    if (sSeen[tl >> 5] & (1u << (tl & 31))) {
                        e = expf16(__fsub_rn(sKeep[r * kvP + j], sM[r]));
                        sKeep[r * kvP + j] = e;
                    }
                    float t = __fadd_rn(e, __shfl_xor_sync(0xffffffffu, e, 8));
                    t = __fadd_rn(t, __shfl_xor_sync(0xffffffffu, t, 4));
                    t = __fadd_rn(t, __shfl_xor_sync(0xffffffffu, t, 2));
                    t = __fadd_rn(t, __shfl_xor_sync(0xffffffffu, t, 1));
                    if ((tid & 15) == 0) sBS[r * nb + j / 16] = t;
                }
            __syncthreads();
            if (tid < R) {
                double acc1 = 0.0;
#pragma unroll 8
                for (int b = 0; b < nb; b++) acc1 += (double)sBS[tid * nb + b];
                sInv[tid] = (float)(1.0 / acc1);
            }
            __syncthreads();
#pragma unroll
            for (int r = 0; r < R; r++) {
                const float inv = sInv[r];
                for (int j = tid; j < kvP; j += NT) {
                    int tl = (unsigned)j / FA_KV;
                    float e = sKeep[r * kvP + j];
                    if ((sSeen[tl >> 5] & (1u << (tl & 31))) && e != 0.f) sKeep[r * kvP + j] = __half2float(__float2half_rn(__fmul_rn(e, inv)));
                }
            }
            __syncthreads();
            continue;
        }
        const bool loadK = !keep || pass == 0, loadV = pass == 2, needMask = loadK;
        // issue queues tile tl's K halves (into sKh) and V halves (into V
        // buffer vb) as this thread's copies; each thread later converts
        // exactly the K halves it copied.
        auto issue = [&](int tl, int vb) {
            int j0 = tl * FA_KV;
            if (al16) {
                // A full tile (every position in the cache) copies with no
                // bounds checks; only a last, partial one checks.
                const long long tOff = (long long)j0 * kvRow;
                const __half* kt = kc0 + tOff;
                const __half* vt = vc0 + tOff;
                __half* sVb = sV0 + vb * FA_KV * VS;
                auto copy = [&](bool chk) {
#pragma unroll
                    for (int n = 0; n < NC16; n++) {
                        const long long g = UNI ? n * cgStep : (long long)(ck(n) - ck0) * kvRow + (cd(n) - cd0h);
                        if (!chk || j0 + ck(n) < kvLen) {
                            if (loadK) fa_cp16(sKh + 8 * (tid + n * NT), kt + g);
                            if (loadV) fa_cp16(sVb + cVoff(n), vt + g);
                        } else if (loadV) {
                            *(uint4*)(sVb + cVoff(n)) = make_uint4(0, 0, 0, 0);
                        }
                    }
                };
                if (j0 + FA_KV <= kvLen)
                    copy(false);
                else
                    copy(true);
            } else {
                for (int i = tid; i < NH2; i += NT) {
                    int kk = i / (HD / 2), d2 = i % (HD / 2), j = j0 + kk;
                    if (j < kvLen) {
                        if (loadK) fa_cp4(sKh + kk * HD + 2 * d2, kbase + j * kvRow + 2 * d2);
                        if (loadV) fa_cp4(sV0 + vb * FA_KV * VS + kk * VS + 2 * d2, vbase + j * kvRow + 2 * d2);
                    } else if (loadV) {
                        *(__half2*)(sV0 + vb * FA_KV * VS + kk * VS + 2 * d2) = __floats2half2_rn(0.f, 0.f);
                    }
                }
            }
            fa_commit();
        };
        // The scorer's mask values for a tile (at its PPT positions).
        auto maskAt = [&](int tl, float* m) {
#pragma unroll
            for (int p = 0; p < PPT; p++) {
                int j = tl * FA_KV + sj + p * PSTEP;
                m[p] = sok && j < kvLen ? mrow[tl * FA_KV + p * PSTEP] : -INFINITY;
            }
        };
        int tile = first, vb = 0;
        float mvNext[PPT];
#pragma unroll
        for (int p = 0; p < PPT; p++) mvNext[p] = -INFINITY;
        if (tile >= 0) {
            if (loadK || loadV) issue(tile, 0);
            if (needMask) maskAt(tile, mvNext);
        }
        while (tile >= 0) {
            const int j0 = tile * FA_KV;
            float mv[PPT];
#pragma unroll
            for (int p = 0; p < PPT; p++) mv[p] = mvNext[p];
            // This tile's float K: buffer vb where DBK (both buffers alternate
            // with the V buffers), else the one.
            float* const sKt = DBK && vb ? sK1 : sK;
            fa_wait0();
            if (loadK) {
                if (al16) {
                    // This thread converts the K halves it copied (its own
                    // cp.async group, waited above); full tiles unchecked.
                    auto convert = [&](bool chk) {
#pragma unroll
                        for (int n = 0; n < NC16; n++) {
                            float4 lo = make_float4(0.f, 0.f, 0.f, 0.f), hi = lo;
                            if (!chk || j0 + ck(n) < kvLen) {
                                uint4 raw = *(const uint4*)(sKh + 8 * (tid + n * NT));
                                const __half2* h2 = (const __half2*)&raw;
                                float2 f0 = __half22float2(h2[0]), f1 = __half22float2(h2[1]), f2 = __half22float2(h2[2]), f3 = __half22float2(h2[3]);
                                lo = make_float4(f0.x, f0.y, f1.x, f1.y);
                                hi = make_float4(f2.x, f2.y, f3.x, f3.y);
                            }
                            *(float4*)(sKt + cKoff(n)) = lo;
                            *(float4*)(sKt + cKoff(n) + 4) = hi;
                        }
                    };
                    if (j0 + FA_KV <= kvLen)
                        convert(false);
                    else
                        convert(true);
                } else {
                    for (int i = tid; i < NH2; i += NT) {
                        int kk = i / (HD / 2), d2 = i % (HD / 2), j = j0 + kk;
                        float2 f = make_float2(0.f, 0.f);
                        if (j < kvLen) f = __half22float2(*(const __half2*)(sKh + kk * HD + 2 * d2));
                        *(float2*)(sKt + kk * KS + 2 * d2) = f;
                    }
                }
            }
            __syncthreads();
            const __half* sV = sV0 + vb * FA_KV * VS;
            const int next = fa_next_seen(sSeen, tile, nTiles);
            if (next >= 0) {
                if (loadK || loadV) issue(next, vb ^ 1);
                if (needMask) maskAt(next, mvNext);
            }
            // The score of (sr, j0+sj), as attention_f16 computes it. Every
            // product is of two F16 values, exact in float, so a product
            // and its add are one fused multiply-add with the same bits.
            float s[PPT];
#pragma unroll
            for (int p = 0; p < PPT; p++) s[p] = -INFINITY;
            if (OCT && loadK) {
                // Every thread computes (whole warps: the shuffles), the
                // dead positions too; s is kept only where live.
#pragma unroll
                for (int p = 0; p < PPT; p++) {
                    const int jp = sj + p * PSTEP;
                    const float* kr = sKt + jp * KS + ql;
                    float kk[NI][4][2];
#pragma unroll
                    for (int i = 0; i < NI; i++)
#pragma unroll
                        for (int g = 0; g < 4; g++)
#pragma unroll
                            for (int h = 0; h < 2; h++) kk[i][g][h] = kr[8 * h + 16 * g + 64 * i];
                    // t3[r] = v16[ql+8] + v16[ql] of row r, each v16 lane
                    // its four group chains (fa_lanes4's) added as the CPU
                    // adds them.
                    float t3[R];
#pragma unroll
                    for (int r = 0; r < R; r++) {
                        float v[2];
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            float a[4];
#pragma unroll
                            for (int g = 0; g < 4; g++) {
                                a[g] = 0.f;
#pragma unroll
                                for (int i = 0; i < NI; i++) {
                                    const float qv = pass == 0 ? qreg[((r * NI + i) * 4 + g) * 2 + h] : sQ[r * HD + ql + 8 * h + 16 * g + 64 * i];
                                    a[g] = __fmaf_rn(qv, kk[i][g][h], a[g]);
                                }
                            }
                            v[h] = __fadd_rn(__fadd_rn(a[0], a[2]), __fadd_rn(a[1], a[3]));
                        }
                        t3[r] = __fadd_rn(v[1], v[0]);
                    }
                    // t6 = t3[l+4] + t3[l] (partner ql^4): of four rows this
                    // thread keeps rows 2b, 2b+1 and hands the partner the
                    // other two, of two rows it keeps row b; then
                    // (t6[0]+t6[2]), (t6[1]+t6[3]) (partner ql^2): of four
                    // rows, row 2b+c; then their sum (partner ql^1). Two
                    // threads adding the same two values get the same bits.
                    // (Selects, not indices: a register array indexed at run
                    // time would live in local memory.)
                    const bool b = ql & 4, c = ql & 2;
                    float u;
                    if (R == 4) {
                        float t6[2];
#pragma unroll
                        for (int k = 0; k < 2; k++)
                            t6[k] = __fadd_rn(b ? t3[R - 2 + k] : t3[k], __shfl_xor_sync(0xffffffffu, b ? t3[k] : t3[R - 2 + k], 4));
                        u = __fadd_rn(c ? t6[1] : t6[0], __shfl_xor_sync(0xffffffffu, c ? t6[0] : t6[1], 2));
                    } else {
                        const float t6 = __fadd_rn(b ? t3[R - 1] : t3[0], __shfl_xor_sync(0xffffffffu, b ? t3[0] : t3[R - 1], 4));
                        u = __fadd_rn(t6, __shfl_xor_sync(0xffffffffu, t6, 2));
                    }
                    const double sd = (double)__fadd_rn(u, __shfl_xor_sync(0xffffffffu, u, 1));
                    const int j = j0 + jp;
                    if (sok && j < kvLen && !(isinf(mv[p]) && mv[p] < 0)) {
                        float v = (float)sd;
                        if (softCap > 0.f) v = __fmul_rn(cpu_tanhf(__fmul_rn(v, invCap)), softCap);
                        s[p] = __fadd_rn(__fmul_rn(v, scale), mv[p]);
                    }
                }
            } else if (SPLIT && loadK && tid < 2 * R * FA_KV) {
                // Both threads of a pair compute (whole warps, the shuffles
                // below), the dead positions too (zeros past the cache's
                // end); s is kept only where live. Warps past the pairs
                // (head size 256: 128 of 256 threads) compute none.
                int j = j0 + sj;
                bool live = sok && j < kvLen && !(isinf(mv[0]) && mv[0] < 0);
                const float* qh = sQ + sr * HD;
                const float* kr = sKt + sj * KS;
                constexpr int npK = HD & ~63;
                // t3[l] = v16[8+l] + v16[l] for this half's lanes l = 4sh..4sh+3.
                float v8[2][4];
#pragma unroll
                for (int p = 0; p < 2; p++) fa_lanes4<npK>(qh, kr, 8 * p + 4 * sh, v8[p]);
                float t3[4], t6[4];
#pragma unroll
                for (int e = 0; e < 4; e++) t3[e] = __fadd_rn(v8[1][e], v8[0][e]);
                // t6[l] = t3[4+l] + t3[l]: the other half's four t3.
#pragma unroll
                for (int e = 0; e < 4; e++) t6[e] = __fadd_rn(t3[e], __shfl_xor_sync(0xffffffffu, t3[e], 1));
                double sd = (double)__fadd_rn(__fadd_rn(t6[0], t6[2]), __fadd_rn(t6[1], t6[3]));
#pragma unroll
                for (int d = npK; d < HD; d++) sd += (double)__fmul_rn(qh[d], kr[d]);
                if (live) {
                    float v = (float)sd;
                    if (softCap > 0.f) v = __fmul_rn(cpu_tanhf(__fmul_rn(v, invCap)), softCap);
                    s[0] = __fadd_rn(__fmul_rn(v, scale), mv[0]);
                }
            } else if (loadK && scorer) {
                int j = j0 + sj;
                bool live = sok && j < kvLen && !(isinf(mv[0]) && mv[0] < 0);
                if (live) {
                    const float* qh = sQ + sr * HD;
                    const float* kr = sKt + sj * KS;
                    constexpr int npK = HD & ~63;
                    float v16[16];
#pragma unroll
                    for (int l0 = 0; l0 < 16; l0 += 4) fa_lanes4<npK>(qh, kr, l0, v16 + l0);
                    double sd = (double)reduce_add16(v16);
#pragma unroll
                    for (int d = npK; d < HD; d++) sd += (double)__fmul_rn(qh[d], kr[d]);
                    float v = (float)sd;
                    if (softCap > 0.f) v = __fmul_rn(cpu_tanhf(__fmul_rn(v, invCap)), softCap);
                    s[0] = __fadd_rn(__fmul_rn(v, scale), mv[0]);
                }
            }
            // The weights of this tile: row r's at wt[r·wst + position].
            const float* wt = sS;
            int wst = FA_KV;
            if (pass == 0) {
#pragma unroll
                for (int p = 0; p < PPT; p++) {
                    if (keep && scorer && sh == 0) sKeep[sr * kvP + j0 + sj + p * PSTEP] = s[p];
                    rmax = fmaxf(rmax, s[p]);
                }
            } else if (pass == 1) {
#pragma unroll
                for (int p = 0; p < PPT; p++)
                    if (scorer && sh == 0) sS[sr * FA_KV + sj + p * PSTEP] = expf16(__fsub_rn(s[p], sM[sr]));
                __syncthreads();
                if (tid < R) {
                    double acc1 = sSum[tid];
#pragma unroll
                    for (int b = 0; b < FA_KV / 16; b++) acc1 += (double)reduce_add16(sS + tid * FA_KV + 16 * b);
                    sSum[tid] = acc1;
                }
            } else {
                if (keep) {
                    wt = sKeep + j0;
                    wst = kvP;
                } else {
#pragma unroll
                    for (int p = 0; p < PPT; p++)
                        if (scorer && sh == 0) {
                            float w = expf16(__fsub_rn(s[p], sM[sr]));
                            if (w != 0.f) w = __half2float(__float2half_rn(__fmul_rn(w, sInv[sr])));
                            sS[sr * FA_KV + sj + p * PSTEP] = w;
                        }
                    __syncthreads();
                }
                if (j0 < npV) {
                    // Each weight is F16 and so is each V value: the
                    // product is exact and one fused multiply-add adds it.
                    float w[R];
#pragma unroll
                    for (int r = 0; r < R; r++) w[r] = wt[r * wst + cm];
                    const __half* vr = sV + cm * VS + cd0;
#pragma unroll
                    for (int c = 0; c < CPD; c += 8) {
                        uint4 raw = *(const uint4*)(vr + c);
                        const __half2* h2 = (const __half2*)&raw;
                        float vv[8];
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            float2 f = __half22float2(h2[e]);
                            vv[2 * e] = f.x;
                            vv[2 * e + 1] = f.y;
                        }
#pragma unroll
                        for (int r = 0; r < R; r++)
                            if (w[r] != 0.f)
#pragma unroll
                                for (int e = 0; e < 8; e++) acc[r][c + e] = __fmaf_rn(w[r], vv[e], acc[r][c + e]);
                    }
                } else if (tid < CELLS) {
                    int r = tid / HD, d = tid % HD;
                    for (int jj = 0; jj < FA_KV; jj++) {
                        float w = wt[r * wst + jj];
                        if (w == 0.f) continue;
                        tail += (double)__fmul_rn(w, __half2float(sV[jj * VS + d]));
                    }
                }
            }
            // Pass 2 with the weights kept reads only V buffer vb here, which
            // the next tile's copies do not touch until after its barrier.
            // Pass 0 with two K buffers (DBK), kept or not, reads only K
            // buffer vb here (the scores; no V, and sS is not touched in
            // pass 0's tiles): a thread writes the next tile's K into the
            // other buffer once past this tile's first barrier, which every
            // thread reaches only once done with the tile before's scores
            // (that buffer's last reads), and the tile after that into this
            // buffer once past the next tile's first barrier, which every
            // thread reaches only once done with this tile's scores. The K
            // halves (sKh) each thread copies it alone converts (its own
            // cp.async group), and the kept scores go to distinct places.
            if (!(keep && pass == 2) && !(DBK && pass == 0)) __syncthreads();
            tile = next;
            vb ^= 1;
        }
        if (pass == 0) {
            // Row maxima: a warp's 32 scores are of one row (WPR warps a
            // row); OCT: each warp's of all R rows (the lanes of row sr
            // differ in the bits FREE: of four rows bits 0, 3 and 4, lanes
            // 0, 2, 4, 6 holding rows 0–3; of two rows bits 0, 1, 3 and 4,
            // lanes 0 and 4).
            constexpr int WPR = OCT ? NT / 32 : (SPLIT ? 2 : 1) * FA_KV / 32;
            float mx = rmax;
            if (OCT) {
                constexpr int FREE = (R == 4 ? 1 : 3) | 24;
#pragma unroll
                for (int o = 1; o < 32; o <<= 1)
                    if (o & FREE) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
                if ((lane & FREE) == 0) sS[sr * FA_KV + warp] = mx;
            } else {
                mx = warp_max(mx);
                if (scorer && lane == 0) sS[sr * FA_KV + warp % WPR] = mx;
            }
            __syncthreads();
            if (tid < R) {
                float m = sS[tid * FA_KV];
#pragma unroll
                for (int k = 1; k < WPR; k++) m = fmaxf(m, sS[tid * FA_KV + k]);
                sM[tid] = fmaxf(sM[tid], m);
            }
            __syncthreads();
        } else if (pass == 1) {
            if (tid < R) sInv[tid] = (float)(1.0 / sSum[tid]);
            __syncthreads();
        }
    }
    // Combine each element's 64 chains as the CPU's reduction does.
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int c = 0; c < CPD; c++) sL[(r * HD + cd0 + c) * LS + cm] = acc[r][c];
    __syncthreads();
    if (tid < CELLS) {
        int r = tid / HD, d = tid % HD, flat = flat0 + r, t = flat / group, h = kvh * group + flat % group;
        const float* L = sL + tid * LS;
        float v16[16];
#pragma unroll
        for (int l = 0; l < 16; l++) v16[l] = __fadd_rn(__fadd_rn(L[l], L[32 + l]), __fadd_rn(L[16 + l], L[48 + l]));
        if (t < T) out[((long long)t * heads + h) * HD + d] = (float)((double)reduce_add16(v16) + tail);
    }
}

// Two blocks an SM for the head sizes up to 128 (at most 128 registers a
// thread; head size 64 spills a few bytes), one for 256; fattn_f16_128w:
// 512 threads, one block an SM.
#define FATTN(name, hd, nt, minb) \
    extern "C" __global__ void __launch_bounds__(nt, minb) name(const float* q, const __half* kc, const __half* vc, const float* mask, \
                                                               const int* used, float* out, int T, int heads, int kvHeads, int kvLen, \
                                                               float scale, float softCap, int keep) { PDL_ENTRY(); \
        fattn<hd, nt>(q, kc, vc, mask, used, out, T, heads, kvHeads, kvLen, scale, softCap, keep); }
FATTN(fattn_f16_64, 64, 256, 2) FATTN(fattn_f16_96, 96, 256, 2) FATTN(fattn_f16_128, 128, 256, 2) FATTN(fattn_f16_256, 256, 256, 1)
FATTN(fattn_f16_128w, 128, 512, 1)
