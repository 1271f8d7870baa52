// Host emulation driver for emu_mmq.sh (session 15): mmqp_* and mmqw_* against mmq_*, bit for bit (session 16:
// weights off 16-byte alignment too, so Q4_K / Q5_K run both their 16-byte compact copies and the 4-byte ones).
#include "shim.h"
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include "emu_launch.h"
#include "common.cuh"
namespace mm {
#include "mma.inc"
}

struct TypeInfo { const char* name; int id, bs, wb; int dOff[2]; int vt; };
TypeInfo types[] = {
    {"q4_0", 2, 32, 18, {0, -1}, 0}, {"q4_1", 3, 32, 20, {0, 2}, 1}, {"q8_0", 8, 32, 34, {0, -1}, 0},
    {"q3_k", 11, 256, 110, {108, -1}, 2}, {"q4_k", 12, 256, 144, {0, 2}, 2}, {"q5_k", 13, 256, 176, {0, 2}, 2}, {"q6_k", 14, 256, 210, {208, -1}, 2},
};

// The kernels of one type: plain, pipelined (64 tokens), wide (128), and their shared memory.
struct Fns {
    void (*plain)(const uint8_t*, const uint8_t*, const uint8_t*, float*, float*, float*, int, int, int, int, int, const int8_t*, const float*,
                  const float*, int, int, long long, int);
    decltype(plain) p, w;
    size_t sp, sw;
};
#define FNS(N, T) {mm::mmq_##N, mm::mmqp_##N, mm::mmqw_##N, mm::mmqpmem<mm::T, 64>::TOTAL, mm::mmqpmem<mm::T, 128>::TOTAL}
Fns fns[] = {FNS(q4_0, Q4_0), FNS(q4_1, Q4_1), FNS(q8_0, Q8_0), FNS(q3_k, Q3_K), FNS(q4_k, Q4_K), FNS(q5_k, Q5_K), FNS(q6_k, Q6_K)};

// shift: the weights that many bytes past a 16-byte boundary (not 0: the 4-byte copies of any type).
int run(int ti_, int n, int T, int rows, unsigned seed, int shift = 0) {
    const TypeInfo& ti = types[ti_];
    const Fns& f = fns[ti_];
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    long long wrb = (long long)n / ti.bs * ti.wb;
    std::vector<uint8_t> Wbuf(wrb * rows + 16 + shift);
    uint8_t* Wal = (uint8_t*)(((uintptr_t)Wbuf.data() + 15) & ~(uintptr_t)15) + shift;
    std::span<uint8_t> W(Wal, wrb * rows);
    for (auto& b : W) b = rng() & 0xff;
    for (int r = 0; r < rows; r++)
        for (int b = 0; b < n / ti.bs; b++)
            for (int k = 0; k < 2; k++)
                if (ti.dOff[k] >= 0) {
                    __half h = __float2half_rn(U(rng) * 0.05f);
                    memcpy(&W[r * wrb + (long long)b * ti.wb + ti.dOff[k]], &h.x, 2);
                }
    std::vector<float> x((size_t)n * T);
    for (auto& v : x) v = U(rng) * 2;
    int kp = (n + 127) / 128 * 128;
    std::vector<int8_t> qx((size_t)kp * T);
    std::vector<float> xs((size_t)kp / 16 * T), xm(xs.size());
    if (ti.vt < 2) launch(dim3{(unsigned)((kp / 32 + 7) / 8), (unsigned)T, 1}, 256, 0, [&] { mm::mmq_act_q8(x.data(), qx.data(), xs.data(), xm.data(), n, kp, ti.vt); });
    else launch(dim3{(unsigned)((kp / 256 + 7) / 8), (unsigned)T, 1}, 256, 0, [&] { mm::mmq_act_q8k(x.data(), qx.data(), xs.data(), xm.data(), n, kp); });
    // Three weights of one launch: rows split r0 + r1 + r2, outputs apart.
    const int r0 = rows / 3 + 1, r1 = rows / 4 + 3, r2 = rows - r0 - r1;
    const int t0 = (r0 + 63) / 64, t01 = t0 + (r1 + 63) / 64, tiles = t01 + (r2 + 63) / 64;
    const uint8_t *w0 = W.data(), *w1 = w0 + r0 * wrb, *w2 = w1 + r1 * wrb;
    std::vector<float> ref[3], got[2][3];
    const int rr[3] = {r0, r1, r2};
    for (int i = 0; i < 3; i++) {
        ref[i].assign((size_t)rr[i] * T, 7.f);
        for (int v = 0; v < 2; v++) got[v][i].assign((size_t)rr[i] * T, 9.f);
    }
    launch(dim3{(unsigned)tiles, (unsigned)((T + 63) / 64), 1}, 128, 0,
           [&] { f.plain(w0, w1, w2, ref[0].data(), ref[1].data(), ref[2].data(), r0, r1, r2, t0, t01, qx.data(), xs.data(), xm.data(), n, kp, wrb, T); });
    launch(dim3{(unsigned)tiles, (unsigned)((T + 63) / 64), 1}, 128, f.sp, [&] {
        f.p(w0, w1, w2, got[0][0].data(), got[0][1].data(), got[0][2].data(), r0, r1, r2, t0, t01, qx.data(), xs.data(), xm.data(), n, kp, wrb, T);
    });
    launch(dim3{(unsigned)tiles, (unsigned)((T + 127) / 128), 1}, 256, f.sw, [&] {
        f.w(w0, w1, w2, got[1][0].data(), got[1][1].data(), got[1][2].data(), r0, r1, r2, t0, t01, qx.data(), xs.data(), xm.data(), n, kp, wrb, T);
    });
    int bad = 0;
    for (int v = 0; v < 2; v++) {
        int differ = 0;
        size_t total = 0;
        for (int i = 0; i < 3; i++)
            for (size_t j = 0; j < ref[i].size(); j++, total++) differ += __float_as_uint(ref[i][j]) != __float_as_uint(got[v][i][j]);
        printf("%s %s shift%d n%d T%d rows%d (%d+%d+%d): %d of %zu differ from mmq_%s (ref[0] %g got[0] %g)\n", v ? "mmqw" : "mmqp", ti.name, shift, n, T, rows, r0, r1,
               r2, differ, total, ti.name, ref[0][0], got[v][0][0]);
        bad += differ != 0;
    }
    fflush(stdout);
    return bad;
}

int main(int argc, char** argv) {
    int bad = 0;
    for (int i = 0; i < (int)(sizeof types / sizeof types[0]); i++) {
        if (argc > 1 && std::string(argv[1]) != types[i].name) continue;
        if (types[i].bs == 32) {
            bad += run(i, 160, 70, 150, 1); // a ragged k-step, token tiles part-full
            bad += run(i, 512, 130, 140, 2);
        } else {
            bad += run(i, 512, 130, 150, 3); // two super-blocks, 130 tokens: a second wide tile of 2
            bad += run(i, 256, 40, 140, 4);
            bad += run(i, 512, 130, 150, 5, 4); // weights off 16-byte alignment: the 4-byte copies
            bad += run(i, 768, 70, 90, 6, 2);
        }
    }
    printf("%s\n", bad ? "FAIL" : "all bit for bit");
    return bad;
}
