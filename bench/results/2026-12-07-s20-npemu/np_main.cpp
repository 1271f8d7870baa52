// Host emulation driver for emu_np.sh (session 20): the norm prologue of
// the staged one-token mat-vecs (decode.cu's mvs_*_mn: q/k/v, or one
// fused weight against mvs_*_1 (group "1" below); mvs_*_wn: gate/up +
// swiglu + its quantization) against today's launches, norm_one
// (the residual add, rms_norm, the norm weight, the quantization into the
// workspace) and then mvs_*_m / mvs_*_w reading that workspace, bit for
// bit: the mat-vec outputs, the chain's side outputs (sum, out, out2, which
// the candidate's block 0 writes), the swiglu's gate/up/product and its
// quantized bytes, and every block's quantized row in its shared memory
// (the dynamic shared memory's activations after each block, against
// norm_one's workspace bytes). The candidate's blocks run in a shuffled
// order with its side outputs pre-filled with garbage (a block that read
// the global sum before block 0 wrote it would show). The "wait" cases put
// the norm's output (and the weighted product) on x (and y), as the
// allocator may, with the counter norm_pro's block 0 waits on: block 0
// then runs last (in the emulator blocks run one after another; block 0's
// wait would never end before the others ran), and the counter must be
// zero after. The serial fallback of rms_mean runs for rows found on the
// host whose mean lies within the fallback's margin of a float32 rounding
// boundary (g_serial counts rms_mean_serial's calls).
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
    float* f() { return (float*)p; }
};

// launch_check: emu_launch.h's launch with the blocks in the order perm,
// calling after(block, dynamic shared memory) after each block.
static void launch_check(unsigned grid, int threads, size_t smem, const std::vector<unsigned>& perm, std::function<void()> k,
                         std::function<void(unsigned, const uint8_t*)> after) {
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
        after(bx, g_dyn);
    }
}

static uint16_t h16(float f) { return __half_as_ushort(__float2half_rn(f)); }

enum { Q4_0, Q8_0, Q4K, Q6K };
static const char* tname[] = {"q4_0", "q8_0", "q4_k", "q6_k"};
static const int wbs[] = {18, 34, 144, 210}; // weight block bytes
static const int wel[] = {32, 32, 256, 256}; // elements a weight block
static const int rpw[] = {2, 1, 1, 1};       // MVS_RPW_*

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

static int compareB(const char* what, const uint8_t* ref, const uint8_t* got, size_t n) {
    size_t diff = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (ref[i] != got[i]) {
            if (!diff) first = i;
            diff++;
        }
    if (diff) printf("  %s: %zu of %zu bytes DIFFER (first %zu)\n", what, diff, n, first);
    return diff != 0;
}

// serialNeeded: whether the row v (n values, the sum already taken) is one
// whose rms_mean takes the serial fallback in every summation order: the
// serial chain's mean within half the fallback's margin of a float32
// rounding boundary (common.cuh: any order's sum lies within 2.001·n·2^-53·t
// of the serial one, the margin is t·n·2^-51).
static bool serialNeeded(const float* v, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)(v[i] * v[i]);
    const double fn = n, e = s * (fn * 0x1p-51) * 0.5;
    return (float)((s - e) / fn) != (float)((s + e) / fn);
}

// makeSerial changes the row's last value (x[n-1], with y[n-1] added when
// y) until serialNeeded holds.
static bool makeSerial(float* x, const float* y, int n, std::mt19937& rng) {
    std::vector<float> v(n);
    for (int i = 0; i < n; i++) v[i] = y ? x[i] + y[i] : x[i];
    double s = 0;
    for (int i = 0; i < n - 1; i++) s += (double)(v[i] * v[i]);
    std::uniform_real_distribution<float> U(-2.f, 2.f);
    for (long it = 0; it < 50000000; it++) {
        const float xl = U(rng), vl = y ? xl + y[n - 1] : xl;
        const double t = s + (double)(vl * vl), fn = n, e = t * (fn * 0x1p-51) * 0.5;
        if ((float)((t - e) / fn) != (float)((t + e) / fn)) {
            x[n - 1] = xl;
            v[n - 1] = vl;
            return serialNeeded(v.data(), n);
        }
    }
    return false;
}

static const char* qtname[] = {"none", "q8_0", "q8_1", "q8_K"};

struct Case {
    int type, n, nw;
    bool add, mul;
    char group; // 'm': q/k/v (mvs_*_mn), 'w': gate/up + swiglu (mvs_*_wn)
    int mode;   // 0 plain, 1 serial fallback row, 2 out on x and out2 on y (block 0 waits)
};

static int run(const Case& c, unsigned seed) {
    std::mt19937 rng(seed);
    const int type = c.type, n = c.n, nw = c.nw, nblk = n / wel[type];
    const bool kq = type == Q4K || type == Q6K;
    const int qt = kq ? 3 : 1;
    const long long wrb = (long long)nblk * wbs[type], xrb = kq ? (long long)n / 256 * 292 : (long long)n / 32 * 34;
    if (wrb % 16) {
        printf("skip: rows of %lld bytes are not staged\n", wrb);
        return 0;
    }
    std::uniform_real_distribution<float> U(-2.f, 2.f), P(0.5f, 1.5f);
    // The chain's inputs, for the reference (r*) and the candidate (c*): the same bytes.
    std::vector<float> x(n), y(n), w(n);
    for (auto& v : x) v = U(rng);
    for (auto& v : y) v = U(rng);
    for (auto& v : w) v = P(rng);
    if (c.mode == 1 && !makeSerial(x.data(), c.add ? y.data() : nullptr, n, rng)) {
        printf("no serial-fallback row found\n");
        return 1;
    }
    const size_t fb = 4 * (size_t)n;
    Buf rx(fb), ry(fb), rsum(fb), rout(fb), rout2(fb), rq(xrb + 64), cx(fb), cy(fb), csum(fb), cout_(fb), cout2(fb), wb(fb);
    memcpy(rx.p, x.data(), fb), memcpy(cx.p, x.data(), fb), memcpy(ry.p, y.data(), fb), memcpy(cy.p, y.data(), fb), memcpy(wb.p, w.data(), fb);
    const bool wait = c.mode == 2;
    // NP_NOWAIT (a mutation check): the out-on-x cases without the counter, block 0 first.
    const bool nowait = wait && getenv("NP_NOWAIT");
    // Where the norm's outputs go: their own buffers, or (wait) on x and y.
    float* rO = wait ? rx.f() : rout.f();
    float* rO2 = wait ? (c.add ? ry.f() : rout2.f()) : rout2.f();
    float* cO = wait ? cx.f() : cout_.f();
    float* cO2 = wait ? (c.add ? cy.f() : cout2.f()) : cout2.f();
    const float* W = c.mul ? wb.f() : nullptr;
    for (float* p : {csum.f(), cout_.f(), cout2.f()}) std::fill(p, p + n, -31.f); // garbage in the candidate's side outputs
    const float eps = 1e-5f;
    int rc = 0;
    // The reference: norm_one (its launch: norm1Block), then the mat-vecs reading rq.
    const int s0 = g_serial;
    {
        int th = std::min(1024, (n + 31) / 32 * 32), need = (n + 8 * 32 - 1) / (8 * 32) * 32;
        th = std::min(1024, std::max(th, need));
        launch(1, th, qt == 3 ? fb : 0, [&] {
            dc::norm_one(rx.f(), c.add ? ry.f() : nullptr, c.add ? rsum.f() : nullptr, rO, W, c.mul ? rO2 : nullptr, rq.p, n, eps, qt);
        });
    }
    const int serialRef = g_serial - s0;
    const int per = nw * rpw[type];
    const size_t smemRef = (size_t)8 * rpw[type] * wrb + ((xrb + 15) & ~15LL);
    const size_t smem = (size_t)per * wrb + ((xrb + 15) & ~15LL) + fb;
    unsigned rd = 0;
    unsigned* rdp = wait && !nowait ? &rd : nullptr;
    int xsBad = 0, s1 = 0;
    auto after = [&](unsigned bx, const uint8_t* dyn) { xsBad += memcmp(dyn + (size_t)per * wrb, rq.p, xrb) != 0; };
    auto order = [&](unsigned grid) {
        std::vector<unsigned> perm(grid);
        for (unsigned i = 0; i < grid; i++) perm[i] = i;
        std::shuffle(perm.begin(), perm.end(), rng);
        if (wait) { // block 0 last (first: NP_NOWAIT)
            perm.erase(std::find(perm.begin(), perm.end(), 0u));
            if (nowait) perm.insert(perm.begin(), 0u);
            else perm.push_back(0);
        }
        return perm;
    };
    const char* what = "";
    unsigned grid = 0;
    if (c.group == 'o') {
        // One weight (a device block's fused Q/K/V or gate/up): mvs_*_mn with r1 = r2 = 0 against mvs_*_1.
        const int r0 = 72;
        Buf W0((size_t)r0 * wrb);
        fillW(type, W0.p, (size_t)r0 * nblk, 0.05f, rng);
        std::vector<float> ro0(r0, -7.f), co0(r0, -9.f);
        launch((r0 + 8 * rpw[type] - 1) / (8 * rpw[type]), 256, smemRef, [&] {
            switch (type) {
            case Q4_0: dc::mvs_q4_0_1(W0.p, rq.p, ro0.data(), r0, nblk, wrb, xrb, 1); break;
            case Q8_0: dc::mvs_q8_0_1(W0.p, rq.p, ro0.data(), r0, nblk, wrb, xrb, 1); break;
            case Q4K: dc::mvs_q4_k_1(W0.p, rq.p, ro0.data(), r0, nblk, wrb, xrb, 1); break;
            case Q6K: dc::mvs_q6_k_1(W0.p, rq.p, ro0.data(), r0, nblk, wrb, xrb, 1); break;
            }
        });
        grid = (r0 + per - 1) / per;
        s1 = g_serial;
        const float* Y = c.add ? cy.f() : nullptr;
        float *S = c.add ? csum.f() : nullptr, *O2 = c.mul ? cO2 : nullptr;
        launch_check(grid, 32 * nw, smem, order(grid), [&] {
            switch (type) {
            case Q4_0: dc::mvs_q4_0_mn(W0.p, nullptr, nullptr, co0.data(), nullptr, nullptr, r0, 0, 0, nblk, wrb, xrb, cx.f(), Y, S, cO, W, O2, n, eps, qt, rdp); break;
            case Q8_0: dc::mvs_q8_0_mn(W0.p, nullptr, nullptr, co0.data(), nullptr, nullptr, r0, 0, 0, nblk, wrb, xrb, cx.f(), Y, S, cO, W, O2, n, eps, qt, rdp); break;
            case Q4K: dc::mvs_q4_k_mn(W0.p, nullptr, nullptr, co0.data(), nullptr, nullptr, r0, 0, 0, nblk, wrb, xrb, cx.f(), Y, S, cO, W, O2, n, eps, qt, rdp); break;
            case Q6K: dc::mvs_q6_k_mn(W0.p, nullptr, nullptr, co0.data(), nullptr, nullptr, r0, 0, 0, nblk, wrb, xrb, cx.f(), Y, S, cO, W, O2, n, eps, qt, rdp); break;
            }
        }, after);
        rc |= compareF("out0", ro0.data(), co0.data(), r0);
        what = "mn(1)";
    } else if (c.group == 'm') {
        const int r0 = 40, r1 = 24, r2 = 24, total = r0 + r1 + r2;
        Buf W0((size_t)r0 * wrb), W1((size_t)r1 * wrb), W2((size_t)r2 * wrb);
        fillW(type, W0.p, (size_t)r0 * nblk, 0.05f, rng), fillW(type, W1.p, (size_t)r1 * nblk, 0.05f, rng), fillW(type, W2.p, (size_t)r2 * nblk, 0.05f, rng);
        std::vector<float> ro0(r0, -7.f), ro1(r1, -7.f), ro2(r2, -7.f), co0(r0, -9.f), co1(r1, -9.f), co2(r2, -9.f);
        launch((total + 8 * rpw[type] - 1) / (8 * rpw[type]), 256, smemRef, [&] {
            switch (type) {
            case Q4_0: dc::mvs_q4_0_m(W0.p, W1.p, W2.p, ro0.data(), ro1.data(), ro2.data(), r0, r1, r2, nblk, wrb, rq.p, xrb); break;
            case Q8_0: dc::mvs_q8_0_m(W0.p, W1.p, W2.p, ro0.data(), ro1.data(), ro2.data(), r0, r1, r2, nblk, wrb, rq.p, xrb); break;
            case Q4K: dc::mvs_q4_k_m(W0.p, W1.p, W2.p, ro0.data(), ro1.data(), ro2.data(), r0, r1, r2, nblk, wrb, rq.p, xrb); break;
            case Q6K: dc::mvs_q6_k_m(W0.p, W1.p, W2.p, ro0.data(), ro1.data(), ro2.data(), r0, r1, r2, nblk, wrb, rq.p, xrb); break;
            }
        });
        grid = (total + per - 1) / per;
        s1 = g_serial;
        const float* Y = c.add ? cy.f() : nullptr;
        float *S = c.add ? csum.f() : nullptr, *O2 = c.mul ? cO2 : nullptr;
        launch_check(grid, 32 * nw, smem, order(grid), [&] {
            switch (type) {
            case Q4_0: dc::mvs_q4_0_mn(W0.p, W1.p, W2.p, co0.data(), co1.data(), co2.data(), r0, r1, r2, nblk, wrb, xrb, cx.f(), Y, S, cO, W, O2, n, eps, qt, rdp); break;
            case Q8_0: dc::mvs_q8_0_mn(W0.p, W1.p, W2.p, co0.data(), co1.data(), co2.data(), r0, r1, r2, nblk, wrb, xrb, cx.f(), Y, S, cO, W, O2, n, eps, qt, rdp); break;
            case Q4K: dc::mvs_q4_k_mn(W0.p, W1.p, W2.p, co0.data(), co1.data(), co2.data(), r0, r1, r2, nblk, wrb, xrb, cx.f(), Y, S, cO, W, O2, n, eps, qt, rdp); break;
            case Q6K: dc::mvs_q6_k_mn(W0.p, W1.p, W2.p, co0.data(), co1.data(), co2.data(), r0, r1, r2, nblk, wrb, xrb, cx.f(), Y, S, cO, W, O2, n, eps, qt, rdp); break;
            }
        }, after);
        rc |= compareF("q", ro0.data(), co0.data(), r0) | compareF("k", ro1.data(), co1.data(), r1) | compareF("v", ro2.data(), co2.data(), r2);
        what = "mn";
    } else {
        // Gate and up of rows rows; the product quantized for a down mat-vec of the same family (q8_0 / q8_K).
        const int rows = kq ? 256 : 64, G = kq ? 256 : 32, hqt = qt;
        const long long qxrb = kq ? rows / 256 * 292 : rows / 32 * 34;
        Buf Wg((size_t)rows * wrb), Wu((size_t)rows * wrb);
        fillW(type, Wg.p, (size_t)rows * nblk, 0.05f, rng), fillW(type, Wu.p, (size_t)rows * nblk, 0.05f, rng);
        std::vector<float> rg(rows, -7.f), ru(rows, -7.f), rh(rows, -7.f), cg(rows, -9.f), cu(rows, -9.f), ch(rows, -9.f);
        std::vector<uint8_t> rhq(qxrb + 64, 0x5a), chq(qxrb + 64, 0x5a);
        std::vector<unsigned> counters(1024, 0);
        {
            const int h = 8 * rpw[type] / 2;
            launch((rows + h - 1) / h, 256, smemRef, [&] {
                switch (type) {
                case Q4_0: dc::mvs_q4_0_w(Wg.p, Wu.p, rg.data(), ru.data(), rh.data(), rows, nblk, wrb, rq.p, xrb, rhq.data(), hqt, counters.data()); break;
                case Q8_0: dc::mvs_q8_0_w(Wg.p, Wu.p, rg.data(), ru.data(), rh.data(), rows, nblk, wrb, rq.p, xrb, rhq.data(), hqt, counters.data()); break;
                case Q4K: dc::mvs_q4_k_w(Wg.p, Wu.p, rg.data(), ru.data(), rh.data(), rows, nblk, wrb, rq.p, xrb, rhq.data(), hqt, counters.data()); break;
                case Q6K: dc::mvs_q6_k_w(Wg.p, Wu.p, rg.data(), ru.data(), rh.data(), rows, nblk, wrb, rq.p, xrb, rhq.data(), hqt, counters.data()); break;
                }
            });
        }
        const int h = per / 2;
        grid = (rows + h - 1) / h;
        s1 = g_serial;
        const float* Y = c.add ? cy.f() : nullptr;
        float *S = c.add ? csum.f() : nullptr, *O2 = c.mul ? cO2 : nullptr;
        launch_check(grid, 32 * nw, smem, order(grid), [&] {
            switch (type) {
            case Q4_0: dc::mvs_q4_0_wn(Wg.p, Wu.p, cg.data(), cu.data(), ch.data(), rows, nblk, wrb, xrb, chq.data(), hqt, counters.data(), cx.f(), Y, S, cO, W, O2, n, eps, qt, rdp); break;
            case Q8_0: dc::mvs_q8_0_wn(Wg.p, Wu.p, cg.data(), cu.data(), ch.data(), rows, nblk, wrb, xrb, chq.data(), hqt, counters.data(), cx.f(), Y, S, cO, W, O2, n, eps, qt, rdp); break;
            case Q4K: dc::mvs_q4_k_wn(Wg.p, Wu.p, cg.data(), cu.data(), ch.data(), rows, nblk, wrb, xrb, chq.data(), hqt, counters.data(), cx.f(), Y, S, cO, W, O2, n, eps, qt, rdp); break;
            case Q6K: dc::mvs_q6_k_wn(Wg.p, Wu.p, cg.data(), cu.data(), ch.data(), rows, nblk, wrb, xrb, chq.data(), hqt, counters.data(), cx.f(), Y, S, cO, W, O2, n, eps, qt, rdp); break;
            }
        }, after);
        rc |= compareF("gate", rg.data(), cg.data(), rows) | compareF("up", ru.data(), cu.data(), rows) | compareF("h", rh.data(), ch.data(), rows);
        rc |= compareB("h quantized", rhq.data(), chq.data(), rhq.size());
        int cz = 0;
        for (unsigned v : counters) cz += v != 0;
        if (cz) printf("  counters: %d not zero\n", cz), rc = 1;
        (void)G;
        what = "wn";
    }
    const int serialCand = g_serial - s1;
    // The side outputs (block 0's): the sum, the norm, the product.
    if (c.add) rc |= compareF("sum", rsum.f(), csum.f(), n);
    rc |= compareF("out", rO, cO, n);
    if (c.mul) rc |= compareF("out2", rO2, cO2, n);
    if (xsBad) printf("  %d of %u blocks' shared quantized rows DIFFER from norm_one's\n", xsBad, grid), rc = 1;
    if (rd != 0) printf("  wait counter %u after the launch\n", rd), rc = 1;
    if (c.mode == 1 && (serialRef != 1 || serialCand != (int)grid)) printf("  serial fallback: %d in norm_one, %d in %u blocks\n", serialRef, serialCand, grid), rc = 1;
    printf("mvs_%s_%s vs norm_one+mvs_%s_%c: n %4d warps %d add %d mul %d qt %s%s (%u blocks%s, serial fallbacks %d/%d): %s\n", tname[type], what,
           tname[type], c.group == 'o' ? '1' : c.group, n, nw, c.add, c.mul, qtname[qt], c.mode == 1 ? " serial-row" : c.mode == 2 ? " out-on-x" : "", grid,
           nowait ? ", block 0 first, no counter" : wait ? ", block 0 last" : " shuffled", serialRef, serialCand, rc ? "DIFFER" : "bit for bit");
    return rc;
}

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const std::string only = argc > 1 ? argv[1] : "";
    std::vector<Case> cases;
    for (int type : {Q4_0, Q8_0, Q4K, Q6K}) {
        std::vector<int> ns = {1536, 2048, 4096};
        if (type == Q6K) ns = {2048, 4096}; // (Q6_K rows of 1536: 1260 bytes, not staged)
        int k = 0;
        for (int n : ns)
            for (char g : {'m', 'w'})
                for (bool add : {true, false}) {
                    cases.push_back({type, n, ((k >> 1) + k) % 2 ? 4 : 8, add, true, g, 0}); // warps 8 and 4 with and without the add
                    k++;
                }
        // no norm weight; the serial fallback (with and without the add); out and out2 on x and y.
        cases.push_back({type, 2048, 8, true, false, 'm', 0});
        cases.push_back({type, 2048, 4, true, true, 'm', 1});
        cases.push_back({type, 2048, 8, false, true, 'w', 1});
        cases.push_back({type, 2048, 4, true, true, 'w', 2});
        cases.push_back({type, 2048, 8, true, true, 'm', 2});
        // One weight (against mvs_*_1).
        cases.push_back({type, 2048, 8, true, true, 'o', 0});
        cases.push_back({type, 4096, 4, false, true, 'o', 0});
        cases.push_back({type, 2048, 2, true, true, 'o', 1});
    }
    // Blocks of one and two warps.
    cases.push_back({Q4K, 1536, 1, true, true, 'm', 0});
    cases.push_back({Q4_0, 2048, 2, true, true, 'w', 0});
    int rc = 0;
    unsigned seed = 2000;
    for (const Case& c : cases) {
        seed++;
        if (!only.empty() && only != tname[c.type]) continue;
        rc |= run(c, seed);
    }
    printf(rc ? "FAIL\n" : "all bit for bit\n");
    return rc;
}
