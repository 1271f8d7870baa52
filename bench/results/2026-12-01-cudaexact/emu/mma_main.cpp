#include "shim.h"
#include <cstdio>
#include <random>
#include <string>
#include "emu_launch.h"
#include "common.cuh"
namespace qk {
#include "quant.inc"
}
namespace mm {
#include "mma.inc"
}

struct TypeInfo { const char* name; int id, bs, wb; int dOff[2]; int vt; }; // vt: 0 q8_0, 1 q8_1, 2 q8_K
TypeInfo types[] = {
    {"q4_0", 2, 32, 18, {0, -1}, 0}, {"q4_1", 3, 32, 20, {0, 2}, 1}, {"q8_0", 8, 32, 34, {0, -1}, 0},
    {"q3_k", 11, 256, 110, {108, -1}, 2}, {"q4_k", 12, 256, 144, {0, 2}, 2}, {"q5_k", 13, 256, 176, {0, 2}, 2}, {"q6_k", 14, 256, 210, {208, -1}, 2},
};

int run(const TypeInfo& ti, int n, int T, int rows, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    long long wrb = (long long)n / ti.bs * ti.wb;
    std::vector<uint8_t> W(wrb * rows);
    for (auto& b : W) b = rng() & 0xff;
    for (int r = 0; r < rows; r++)
        for (int b = 0; b < n / ti.bs; b++)
            for (int f = 0; f < 2; f++)
                if (ti.dOff[f] >= 0) {
                    __half h = __float2half_rn(U(rng) * 0.05f);
                    memcpy(&W[r * wrb + (long long)b * ti.wb + ti.dOff[f]], &h.x, 2);
                }
    std::vector<float> x((size_t)n * T);
    for (auto& v : x) v = U(rng) * 2;
    // Reference: quantize to the vec-dot type, batched mat-vec (quant.cu).
    int xbs = ti.vt == 2 ? 256 : 32, xbb = ti.vt == 0 ? 34 : ti.vt == 1 ? 36 : 292;
    long long xrb = (long long)n / xbs * xbb;
    std::vector<uint8_t> X(xrb * T);
    if (ti.vt == 0) launch(dim3{(unsigned)(n / 32), (unsigned)T, 1}, 32, 0, [&] { qk::quant_q8_0(x.data(), X.data(), n, xrb); });
    if (ti.vt == 1) launch(dim3{(unsigned)(n / 32), (unsigned)T, 1}, 32, 0, [&] { qk::quant_q8_1(x.data(), X.data(), n, xrb); });
    if (ti.vt == 2) launch(dim3{(unsigned)(n / 256), (unsigned)T, 1}, 256, 0, [&] { qk::quant_q8_k(x.data(), X.data(), n, xrb); });
    std::vector<float> ref((size_t)rows * T, 7.f), got((size_t)rows * T, 9.f);
    int nblk = n / ti.bs;
    std::string nm = ti.name;
    int ntb = 0;
#define MV(N, TT) if (nm == #N) { ntb = qk::bat<qk::TT>::NTB; launch(dim3{(unsigned)((rows + 3) / 4), (unsigned)((T + ntb - 1) / ntb), 1}, 128, 0, [&] { qk::matvec_##N##_b(W.data(), X.data(), ref.data(), rows, nblk, wrb, xrb, T); }); }
    MV(q4_0, Q4_0) MV(q4_1, Q4_1) MV(q8_0, Q8_0) MV(q3_k, Q3_K) MV(q4_k, Q4_K) MV(q5_k, Q5_K) MV(q6_k, Q6_K)
    // mmq: activations in the tile layout, then the tensor-core kernel.
    int kp = (n + 127) / 128 * 128;
    std::vector<int8_t> qx((size_t)kp * T);
    std::vector<float> xs((size_t)kp / 16 * T), xm(xs.size());
    if (ti.vt < 2) launch(dim3{(unsigned)((kp / 32 + 7) / 8), (unsigned)T, 1}, 256, 0, [&] { mm::mmq_act_q8(x.data(), qx.data(), xs.data(), xm.data(), n, kp, ti.vt); });
    else launch(dim3{(unsigned)((kp / 256 + 7) / 8), (unsigned)T, 1}, 256, 0, [&] { mm::mmq_act_q8k(x.data(), qx.data(), xs.data(), xm.data(), n, kp); });
    int tiles = (rows + 63) / 64;
#define MQ(N) if (nm == #N) launch(dim3{(unsigned)tiles, (unsigned)((T + 63) / 64), 1}, 128, 0, [&] { mm::mmq_##N(W.data(), nullptr, nullptr, got.data(), nullptr, nullptr, rows, 0, 0, tiles, tiles, qx.data(), xs.data(), xm.data(), n, kp, wrb, T); });
    MQ(q4_0) MQ(q4_1) MQ(q8_0) MQ(q3_k) MQ(q4_k) MQ(q5_k) MQ(q6_k)
    int differ = 0;
    double num = 0, den = 0;
    for (size_t i = 0; i < ref.size(); i++) {
        if (__float_as_uint(ref[i]) != __float_as_uint(got[i])) differ++;
        num += (double)(ref[i] - got[i]) * (ref[i] - got[i]);
        den += (double)ref[i] * ref[i];
    }
    printf("%s n%d T%d rows%d: %d of %zu differ, NMSE %.3g (ref[0] %g got[0] %g)\n", ti.name, n, T, rows, differ, ref.size(), num / den, ref[0], got[0]);
    fflush(stdout);
    return differ;
}

int main(int argc, char** argv) {
    int bad = 0;
    for (auto& ti : types) {
        if (argc > 1 && std::string(argv[1]) != ti.name) continue;
        if (ti.bs == 32) {
            bad += run(ti, 96, 33, 65, 1) != 0;
            bad += run(ti, 512, 40, 70, 2) != 0;
            bad += run(ti, 160, 70, 64, 5) != 0; // two token tiles, a ragged k-step
        } else {
            bad += run(ti, 512, 33, 65, 3) != 0;
            bad += run(ti, 256, 70, 64, 4) != 0; // two token tiles, one super-block
        }
    }
    printf("%s\n", bad ? "FAIL" : "all bit-identical");
    return bad;
}
