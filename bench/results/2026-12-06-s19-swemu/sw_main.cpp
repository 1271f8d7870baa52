// Host emulation driver for emu_sw.sh (session 19): the fused one-token
// gate+up mat-vec with the swiglu and its activation quantization
// (decode.cu's mvs_*_w) against today's two launches, mvs_*_m over the
// gate and up weights and then swiglu_quant, bit for bit: the gate and
// up outputs, the product h and every byte of the quantized row (q8_0,
// q8_1, q8_K, or none). The fused kernel's blocks run in a shuffled order
// (a different one each run), so any block may be the last to arrive at a
// quantization group's counter; each case runs it twice (the counters as
// the first run left them, which must be zero).
#include "shim.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include "emu_launch.h"
#include "common.cuh"
namespace dc {
#include "decode.inc"
}

struct Buf {
    uint8_t* p;
    size_t n;
    explicit Buf(size_t n_) : n(n_) { p = (uint8_t*)aligned_alloc(256, (n + 255) / 256 * 256); memset(p, 0, (n + 255) / 256 * 256); }
    ~Buf() { free(p); }
};

// launch_perm: emu_launch.h's launch (blocks one after another, a block's
// threads as std::threads) with the blocks in the order perm.
static void launch_perm(unsigned grid, int threads, size_t smem, const std::vector<unsigned>& perm, std::function<void()> k) {
    std::vector<uint8_t> dyn(smem + 16);
    blockDim = dim3{(unsigned)threads, 1, 1};
    gridDim = dim3{grid, 1, 1};
    g_dyn_size = (uint32_t)smem;
    for (unsigned bx : perm) {
        g_dyn = (uint8_t*)(((uintptr_t)dyn.data() + 15) & ~(uintptr_t)15);
        memset(g_dyn, 0xa5, smem);
        std::barrier<> bb(threads);
        g_block_bar = &bb;
        for (int w = 0; w < threads / 32; w++) g_warp_bar[w] = new std::barrier<>(32);
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; t++)
            ts.emplace_back([&, t] { threadIdx = dim3{(unsigned)t, 0, 0}; blockIdx = dim3{bx, 0, 0}; k(); });
        for (auto& t : ts) t.join();
        for (int w = 0; w < threads / 32; w++) delete g_warp_bar[w];
    }
}

static uint16_t h16(float f) { return __half_as_ushort(__float2half_rn(f)); }

enum { Q4_0, Q8_0, Q4K, Q6K };
static const char* tname[] = {"q4_0", "q8_0", "q4_k", "q6_k"};
static const int wbs[] = {18, 34, 144, 210};    // weight block bytes
static const int wel[] = {32, 32, 256, 256};    // elements a weight block
static const int rpw[] = {2, 1, 1, 1};          // MVS_RPW_*

// Activations of the mat-vec: q8_0 (Q4_0, Q8_0) or q8_K (Q4_K, Q6_K).
static void fillX(int type, uint8_t* X, int nblk, std::mt19937& rng) {
    std::uniform_int_distribution<int> q(-128, 127);
    std::uniform_real_distribution<float> U(0.001f, 0.02f);
    for (int b = 0; b < nblk; b++) {
        if (type == Q4_0 || type == Q8_0) {
            uint8_t* xb = X + (size_t)b * 34;
            uint16_t d = h16(U(rng) * (b % 3 == 0 ? -1.f : 1.f));
            memcpy(xb, &d, 2);
            for (int i = 0; i < 32; i++) xb[2 + i] = (uint8_t)(int8_t)q(rng);
            continue;
        }
        uint8_t* xb = X + (size_t)b * 292;
        float d = U(rng) * (b % 3 == 0 ? -1.f : 1.f);
        memcpy(xb, &d, 4);
        for (int i = 0; i < 256; i++) xb[4 + i] = (uint8_t)(int8_t)q(rng);
        for (int g = 0; g < 16; g++) {
            int s = 0;
            for (int i = 0; i < 16; i++) s += (int8_t)xb[4 + 16 * g + i];
            int16_t v = (int16_t)s;
            memcpy(xb + 260 + 2 * g, &v, 2);
        }
    }
}

// Random weight blocks whose halves (d, and dmin for Q4_K) are finite, of scale sc.
static void fillW(int type, uint8_t* W, size_t nb, float sc, std::mt19937& rng) {
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> U(-sc, sc);
    const int bs = wbs[type];
    for (size_t b = 0; b < nb; b++) {
        uint8_t* wb = W + b * bs;
        for (int i = 0; i < bs; i++) wb[i] = (uint8_t)byte(rng);
        std::vector<int> hoff = type == Q4K ? std::vector<int>{0, 2} : type == Q6K ? std::vector<int>{208} : std::vector<int>{0};
        for (int o : hoff) {
            uint16_t h = h16(U(rng));
            memcpy(wb + o, &h, 2);
        }
    }
}

static int compareF(const char* what, const float* ref, const float* got, int n) {
    int diff = 0, first = -1;
    for (int i = 0; i < n; i++)
        if (memcmp(&ref[i], &got[i], 4) != 0) {
            if (first < 0) first = i;
            diff++;
        }
    if (diff) printf("  %s: %d of %d DIFFER (first %d: ref %.9g got %.9g)\n", what, diff, n, first, ref[first], got[first]);
    return diff != 0;
}

static const char* qtname[] = {"none", "q8_0", "q8_1", "q8_K"};

// run: gate and up weights of n rows of nblk blocks; the reference with
// mvs_*_m (eight warps) and swiglu_quant, the fused kernel with nw warps.
static int run(int type, int nblk, int n, int nw, int qt, unsigned seed, float sc) {
    std::mt19937 rng(seed);
    const long long wrb = (long long)nblk * wbs[type];
    const long long xrb = type == Q4_0 || type == Q8_0 ? (long long)nblk * 34 : (long long)nblk * 292;
    const int G = qt == 3 ? 256 : 32;
    const long long qxrb = qt == 0 ? 0 : qt == 1 ? n / 32 * 34 : qt == 2 ? n / 32 * 36 : n / 256 * 292;
    Buf Wg((size_t)n * wrb), Wu((size_t)n * wrb), X(xrb + 16);
    fillW(type, Wg.p, (size_t)n * nblk, sc, rng);
    fillW(type, Wu.p, (size_t)n * nblk, sc, rng);
    fillX(type, X.p, nblk, rng);
    std::vector<float> rg(n, -7.f), ru(n, -7.f), rh(n, -7.f);
    std::vector<uint8_t> rq(qxrb + 64, 0x5a);
    // Today's launches: mvs_*_m (gate rows then up rows, eight warps), then swiglu_quant.
    {
        const int w = 8, per = w * rpw[type];
        const size_t sm = (size_t)per * wrb + ((xrb + 15) & ~15LL);
        launch((2 * n + per - 1) / per, 32 * w, sm, [&] {
            switch (type) {
            case Q4_0: dc::mvs_q4_0_m(Wg.p, Wu.p, nullptr, rg.data(), ru.data(), nullptr, n, n, 0, nblk, wrb, X.p, xrb); break;
            case Q8_0: dc::mvs_q8_0_m(Wg.p, Wu.p, nullptr, rg.data(), ru.data(), nullptr, n, n, 0, nblk, wrb, X.p, xrb); break;
            case Q4K: dc::mvs_q4_k_m(Wg.p, Wu.p, nullptr, rg.data(), ru.data(), nullptr, n, n, 0, nblk, wrb, X.p, xrb); break;
            case Q6K: dc::mvs_q6_k_m(Wg.p, Wu.p, nullptr, rg.data(), ru.data(), nullptr, n, n, 0, nblk, wrb, X.p, xrb); break;
            }
        });
        launch(std::min((n + 255) / 256, 65535), 256, 0, [&] {
            dc::swiglu_quant(rg.data(), ru.data(), rh.data(), rq.data(), n, (long long)n, qt, qxrb);
        });
    }
    int rc = 0;
    std::vector<unsigned> counters(1024, 0);
    std::vector<float> fg(n, -9.f), fu(n, -9.f), fh(n, -9.f);
    std::vector<uint8_t> fq(qxrb + 64, 0x5a);
    const int h = nw * rpw[type] / 2;
    const unsigned grid = (n + h - 1) / h;
    std::vector<unsigned> perm(grid);
    for (unsigned i = 0; i < grid; i++) perm[i] = i;
    for (int pass = 0; pass < 2; pass++) {
        std::shuffle(perm.begin(), perm.end(), rng);
        std::fill(fh.begin(), fh.end(), -9.f);
        std::fill(fq.begin(), fq.end(), 0x5a);
        const size_t sm = (size_t)nw * rpw[type] * wrb + ((xrb + 15) & ~15LL);
        launch_perm(grid, 32 * nw, sm, perm, [&] {
            switch (type) {
            case Q4_0: dc::mvs_q4_0_w(Wg.p, Wu.p, fg.data(), fu.data(), fh.data(), n, nblk, wrb, X.p, xrb, fq.data(), qt, counters.data()); break;
            case Q8_0: dc::mvs_q8_0_w(Wg.p, Wu.p, fg.data(), fu.data(), fh.data(), n, nblk, wrb, X.p, xrb, fq.data(), qt, counters.data()); break;
            case Q4K: dc::mvs_q4_k_w(Wg.p, Wu.p, fg.data(), fu.data(), fh.data(), n, nblk, wrb, X.p, xrb, fq.data(), qt, counters.data()); break;
            case Q6K: dc::mvs_q6_k_w(Wg.p, Wu.p, fg.data(), fu.data(), fh.data(), n, nblk, wrb, X.p, xrb, fq.data(), qt, counters.data()); break;
            }
        });
        int r = compareF("gate", rg.data(), fg.data(), n) | compareF("up", ru.data(), fu.data(), n) | compareF("h", rh.data(), fh.data(), n);
        int qd = 0, first = -1;
        for (size_t i = 0; i < fq.size(); i++)
            if (fq[i] != rq[i]) {
                if (first < 0) first = (int)i;
                qd++;
            }
        if (qd) printf("  quantized: %d of %lld bytes DIFFER (first %d)\n", qd, qxrb, first);
        int cz = 0;
        for (unsigned c : counters) cz += c != 0;
        if (cz) printf("  counters: %d not zero after the launch\n", cz);
        r |= qd != 0 || cz != 0;
        printf("mvs_%s_w vs mvs_%s_m+swiglu_quant: nblk %3d n %5d warps %d (rows a block %d, %u blocks shuffled) qt %s groups %d pass %d: %s\n", tname[type],
               tname[type], nblk, n, nw, h, grid, qtname[qt], qt ? n / G : 0, pass, r ? "DIFFER" : "bit for bit");
        rc |= r;
    }
    return rc;
}

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    int rc = 0;
    unsigned seed = 1900;
    const std::string only = argc > 1 ? argv[1] : "";
    struct C { int type, nblk, n, nw, qt; float sc; };
    // Rows of a multiple of 16 bytes (the staged kernels' copies): Q4_0, Q8_0 and Q6_K rows of eight blocks.
    std::vector<C> cases = {
        // Q4_0 (the 1.1B's FFN: q8_0 for the Q4_0 down; rows shortened from 2048 and 5632 for time): the launch's warps (8,
        // 4: blocks of 8 and 4 rows) and 3 and 6 warps (blocks of 3 and 6 rows: groups of 32 straddling blocks, n not a
        // multiple of the block's rows).
        {Q4_0, 8, 1024, 8, 1, 0.05f}, {Q4_0, 8, 1024, 4, 1, 0.05f}, {Q4_0, 8, 1024, 3, 1, 0.05f}, {Q4_0, 8, 352, 6, 1, 0.05f},
        // q8_1 and q8_K targets over Q4_0 rows (the kernel takes any qt), and none with n not a multiple of 16 (expf_libm on the
        // tail), and a single row.
        {Q4_0, 8, 160, 3, 2, 0.05f}, {Q4_0, 8, 768, 3, 3, 0.05f}, {Q4_0, 8, 100, 3, 0, 0.05f}, {Q4_0, 8, 1, 8, 0, 0.05f},
        // Q4_K (the 8B's FFN, q8_K for the Q4_K down), 8, 4, 6 and 2 warps (blocks of 4, 2, 3, 1 rows).
        {Q4K, 2, 1536, 8, 3, 0.02f}, {Q4K, 2, 1536, 4, 3, 0.02f}, {Q4K, 2, 1536, 6, 3, 0.02f}, {Q4K, 1, 512, 2, 3, 0.02f},
        {Q4K, 2, 96, 6, 1, 0.02f}, {Q4K, 1, 37, 6, 0, 0.02f},
        // The other staged types.
        {Q8_0, 8, 320, 8, 1, 0.02f}, {Q8_0, 8, 320, 3, 1, 0.02f}, {Q6K, 8, 512, 8, 3, 0.02f}, {Q6K, 8, 512, 6, 3, 0.02f},
    };
    for (const C& c : cases) {
        if (!only.empty() && only != tname[c.type]) continue;
        rc |= run(c.type, c.nblk, c.n, c.nw, c.qt, seed++, c.sc);
    }
    printf(rc ? "FAIL\n" : "all bit for bit\n");
    return rc;
}
