// Host emulation driver for emu_dec.sh (session 15): the streaming and
// swiglu-fused one-token mat-vecs against the staged ones, and the rope/store
// group fused into the one-block attention against the two kernels, bit for bit.
#include "shim.h"
#include <cstdio>
#include <random>
#include <string>
thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
std::barrier<>* g_block_bar;
std::barrier<>* g_warp_bar[32];
std::atomic<int> g_or{0};
uint64_t g_shfl[32][32];
int g_mA[32][32][4], g_mB[32][32][2];
uint8_t* g_dyn;
#include "common.cuh"
namespace qk {
#include "quant.inc"
}
namespace dc {
#include "decode.inc"
}

void launch(unsigned grid, int threads, size_t smem, std::function<void()> k) {
    std::vector<uint8_t> dyn(smem + 16);
    blockDim = dim3{(unsigned)threads, 1, 1};
    gridDim = dim3{grid, 1, 1};
    for (unsigned bx = 0; bx < grid; bx++) {
        g_dyn = (uint8_t*)(((uintptr_t)dyn.data() + 15) & ~(uintptr_t)15);
        memset(g_dyn, 0xa5, smem); // stale bytes: what a kernel reads before it writes shows
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

static long long r16(long long n) { return (n + 15) & ~15LL; }

static void weights(std::vector<uint8_t>& W, int rows, int nb, int bb, int dOff0, int dOff1, std::mt19937& rng) {
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    for (auto& b : W) b = rng() & 0xff;
    for (int r = 0; r < rows; r++)
        for (int b = 0; b < nb; b++)
            for (int off : {dOff0, dOff1})
                if (off >= 0) {
                    __half h = __float2half_rn(U(rng) * 0.05f);
                    memcpy(&W[((long long)r * nb + b) * bb + off], &h.x, 2);
                }
}

static int report(const char* what, const std::vector<float>& ref, const std::vector<float>& got) {
    int diff = 0;
    for (size_t i = 0; i < ref.size(); i++) diff += memcmp(&ref[i], &got[i], 4) != 0;
    printf("%s: %d of %zu differ (ref[0] %g got[0] %g)\n", what, diff, ref.size(), ref[0], got[0]);
    return diff != 0;
}

// streaming: mvr_<t>_1 and _m against mvs_<t>_1, Q4_K (bb 144) or Q6_K (210).
static int stream(bool q6, int n, int rows, unsigned grid, unsigned seed) {
    std::mt19937 rng(seed);
    const int bb = q6 ? 210 : 144, nb = n / 256;
    const long long wrb = (long long)nb * bb, xrb = (long long)nb * 292;
    std::vector<uint8_t> W(wrb * rows), X(r16(xrb));
    q6 ? weights(W, rows, nb, bb, 208, -1, rng) : weights(W, rows, nb, bb, 0, 2, rng);
    std::vector<float> x(n);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    for (auto& v : x) v = U(rng) * 2;
    launch(nb, 256, 0, [&] { qk::quant_q8_k(x.data(), X.data(), n, xrb); });
    std::vector<float> ref(rows), got(rows, -1.f), gotm(rows, -1.f);
    launch((rows + 7) / 8, 256, 8 * wrb + r16(xrb), [&] {
        q6 ? dc::mvs_q6_k_1(W.data(), X.data(), ref.data(), rows, nb, wrb, xrb, 1) : dc::mvs_q4_k_1(W.data(), X.data(), ref.data(), rows, nb, wrb, xrb, 1);
    });
    const size_t smem = r16(xrb) + 8 * 4 * 8 * bb;
    launch(grid, 256, smem, [&] {
        q6 ? dc::mvr_q6_k_1(W.data(), X.data(), got.data(), rows, nb, wrb, xrb, 1) : dc::mvr_q4_k_1(W.data(), X.data(), got.data(), rows, nb, wrb, xrb, 1);
    });
    const int r0 = rows / 3, r1 = rows / 2 - r0, r2 = rows - r0 - r1;
    launch(grid, 256, smem, [&] {
        const uint8_t *w0 = W.data(), *w1 = w0 + r0 * wrb, *w2 = w1 + r1 * wrb;
        float *o0 = gotm.data(), *o1 = o0 + r0, *o2 = o1 + r1;
        q6 ? dc::mvr_q6_k_m(w0, w1, w2, o0, o1, o2, r0, r1, r2, nb, wrb, X.data(), xrb)
           : dc::mvr_q4_k_m(w0, w1, w2, o0, o1, o2, r0, r1, r2, nb, wrb, X.data(), xrb);
    });
    char name[96];
    snprintf(name, sizeof name, "mvr_%s_1 n%d rows%d grid%u", q6 ? "q6_k" : "q4_k", n, rows, grid);
    int rc = report(name, ref, got);
    snprintf(name, sizeof name, "mvr_%s_m n%d rows%d (%d+%d+%d) grid%u", q6 ? "q6_k" : "q4_k", n, rows, r0, r1, r2, grid);
    return rc | report(name, ref, gotm);
}

// swiglu + mat-vec: mvs_<t>_sw against swiglu_quant + mvs_<t>_1, Q4_0 or Q8_0.
static int swiglu(bool q8, int n, int rows, unsigned seed) {
    std::mt19937 rng(seed);
    const int bb = q8 ? 34 : 18, nb = n / 32, rpw = q8 ? 1 : 2;
    const long long wrb = (long long)nb * bb, xrb = (long long)nb * 34;
    std::vector<uint8_t> W(wrb * rows), X(r16(xrb));
    weights(W, rows, nb, bb, 0, -1, rng);
    std::vector<float> g(n), u(n), p(n), p2(n, -1.f);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    for (int i = 0; i < n; i++) g[i] = U(rng) * 3, u[i] = U(rng) * 3;
    launch((n + 255) / 256, 256, 0, [&] { dc::swiglu_quant(g.data(), u.data(), p.data(), X.data(), n, n, 1, xrb); });
    std::vector<float> ref(rows), got(rows, -1.f);
    const unsigned grid = (rows + 8 * rpw - 1) / (8 * rpw);
    const size_t smem = 8 * rpw * wrb + r16(xrb);
    launch(grid, 256, smem, [&] {
        q8 ? dc::mvs_q8_0_1(W.data(), X.data(), ref.data(), rows, nb, wrb, xrb, 1) : dc::mvs_q4_0_1(W.data(), X.data(), ref.data(), rows, nb, wrb, xrb, 1);
    });
    launch(grid, 256, smem, [&] {
        q8 ? dc::mvs_q8_0_sw(W.data(), g.data(), u.data(), p2.data(), got.data(), rows, nb, wrb, xrb, n)
           : dc::mvs_q4_0_sw(W.data(), g.data(), u.data(), p2.data(), got.data(), rows, nb, wrb, xrb, n);
    });
    char name[96];
    snprintf(name, sizeof name, "mvs_%s_sw n%d rows%d", q8 ? "q8_0" : "q4_0", n, rows);
    int rc = report(name, ref, got);
    snprintf(name, sizeof name, "mvs_%s_sw n%d rows%d: the product", q8 ? "q8_0" : "q4_0", n, rows);
    return rc | report(name, p, p2);
}


// rope/store + one-block attention: attn_x_one_rope_<HD> against
// rope_store_one + attn_x_one_<HD> (heads 8 over 2 kv heads, the current
// token at cache row r, the attention's output quantized to q8_0).
static int ropeattn(int kvLen, unsigned seed) {
    constexpr int HD = 64, heads = 8, kvH = 2, n = kvH * HD, ctx = 256;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    const int r = kvLen - 1, nkvMax = std::max(32, (kvLen + 31) / 32 * 32);
    std::vector<float> x(heads * HD), x2(n), vx(n), mask(kvLen, 0.f);
    for (auto& v : x) v = U(rng) * 2;
    for (auto& v : x2) v = U(rng) * 2;
    for (auto& v : vx) v = U(rng) * 2;
    for (int j = 0; j < kvLen; j += 7) if (j != r) mask[j] = -INFINITY;
    std::vector<__half> kc(ctx * n), vc(ctx * n);
    for (auto& h : kc) h = __float2half_rn(U(rng));
    for (auto& h : vc) h = __float2half_rn(U(rng));
    auto kc2 = kc, vc2 = vc;
    int pos = 1000 + kvLen, rows = r;
    const float ts = powf(10000.f, -2.f / HD), scale = 1.f / sqrtf((float)HD);
    std::vector<float> qo(heads * HD), ko(n), out(heads * HD), qo2(heads * HD, -1.f), ko2(n, -1.f), out2(heads * HD, -2.f);
    std::vector<uint8_t> q8(heads * HD / 32 * 34), q82(q8.size(), 0x5a);
    std::vector<unsigned> counters(64, 0);
    const size_t sm = 4 * ((HD + 64 + nkvMax + nkvMax / 16 + 128 * HD + 3) & ~3) + 2 * nkvMax * HD + 2 * HD;
    launch(heads + kvH + (n + HD - 1) / HD, 32, 0, [&] {
        dc::rope_store_one(x.data(), qo.data(), heads, x2.data(), ko.data(), kvH, &pos, nullptr, HD, HD, 0, 1.f, ts, kc.data(), vc.data(), vx.data(),
                           &rows, n, ctx, 1);
    });
    launch(heads, 512, sm, [&] {
        dc::attn_x_one_64(qo.data(), kc.data(), vc.data(), mask.data(), out.data(), heads, kvH, kvLen, nkvMax, scale, 0.f, q8.data(), 1,
                          counters.data());
    });
    launch(heads, 512, sm, [&] {
        dc::attn_x_one_rope_64(x.data(), qo2.data(), x2.data(), ko2.data(), vx.data(), &pos, nullptr, HD, 0, 1.f, ts, &rows, n, ctx, kc2.data(),
                               vc2.data(), mask.data(), out2.data(), heads, kvH, kvLen, nkvMax, scale, 0.f, q82.data(), 1, counters.data());
    });
    char name[96];
    int rc = 0;
    snprintf(name, sizeof name, "attn_x_one_rope_64 kvLen%d: output", kvLen);
    rc |= report(name, out, out2);
    snprintf(name, sizeof name, "attn_x_one_rope_64 kvLen%d: q rope", kvLen);
    rc |= report(name, qo, qo2);
    snprintf(name, sizeof name, "attn_x_one_rope_64 kvLen%d: k rope", kvLen);
    rc |= report(name, ko, ko2);
    int cd = memcmp(kc.data(), kc2.data(), kc.size() * 2) != 0, vd = memcmp(vc.data(), vc2.data(), vc.size() * 2) != 0, qd = q8 != q82;
    printf("attn_x_one_rope_64 kvLen%d: k cache %s, v cache %s, q8_0 output %s\n", kvLen, cd ? "DIFFERS" : "same", vd ? "DIFFERS" : "same",
           qd ? "DIFFERS" : "same");
    return rc | cd | vd | qd;
}

int main() {
    int rc = 0;
    rc |= stream(false, 4096, 45, 2, 1);
    rc |= stream(false, 256 * 41, 21, 1, 2);
    rc |= stream(false, 512, 100, 3, 3);
    rc |= stream(true, 4096, 45, 2, 4);
    rc |= stream(true, 256 * 40, 19, 1, 5);
    rc |= swiglu(false, 2048, 45, 6);
    rc |= swiglu(false, 5632, 20, 7);
    rc |= swiglu(true, 2048, 45, 8);
    rc |= ropeattn(100, 9);
    rc |= ropeattn(33, 10);
    rc |= ropeattn(200, 11);
    printf(rc ? "FAIL\n" : "all bit for bit\n");
    return rc;
}
