// Session 22: ../2026-12-01-cudaexact/emu/attn_main.cpp with six more shapes for the four-row kernels (below).\n// Host emulation driver for emu.sh attn: the exact flash kernels of fattn.cu (fattn_f16_64/96/128/256 and the
// 512-thread fattn_f16_128w, the scores kept or computed again) against attention_f16 (ops.cu), bit for bit.
// (Session 1 wrote it for the first flash kernels; session 16 brought it to today's: the keep flag, the wide
// kernel, windows that hide whole tiles, and the launch of emu_launch.h.)
#include "shim.h"
#include <cstdio>
#include <random>
#include "emu_launch.h"
#include "common.cuh"
#include "ops_attn.inc"
#include "fattn.inc"

// run: one shape through attention_f16 and through the flash kernel of head size hd (wide: fattn_f16_128w), the
// scores kept or not; window > 0 also hides the positions more than window before each query (whole tiles unseen).
int run(int hd, int heads, int kvHeads, int past, int T, int kvLen, float softCap, float qScale, bool holes, int window, bool wide, int keep,
        unsigned seed, int off = 0) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    int ctx = std::max(kvLen, past + T);
    std::vector<float> q((size_t)T * heads * hd);
    for (auto& v : q) v = U(rng) * qScale;
    // off: the caches start off halves into their buffers (2: 4-byte aligned only, the kernels' 4-byte copies).
    std::vector<__half> kcb((size_t)ctx * kvHeads * hd + off), vcb(kcb.size());
    for (auto& v : kcb) v = __float2half_rn(U(rng));
    for (auto& v : vcb) v = __float2half_rn(U(rng));
    const __half* kcp = kcb.data() + off; const __half* vcp = vcb.data() + off;
    std::vector<float> mask((size_t)T * kvLen, 0.f);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < kvLen; j++)
            if (j > past + i || (holes && j % 5 == 3 && j != past + i) || (window > 0 && j < past + i - window)) mask[(size_t)i * kvLen + j] = -INFINITY;
    int used = 0;
    launch(dim3{1, 1, 1}, 1024, 1024 * 4, [&] { attn_used(mask.data(), T, kvLen, &used); });
    float scale = 1.f / sqrtf((float)hd);
    std::vector<float> o1(q.size(), 7.f), o2(q.size(), 9.f);
    launch(dim3{(unsigned)heads, (unsigned)T, 1}, 256, 200 * 1024, [&] {
        attention_f16(q.data(), kcp, vcp, mask.data(), &used, o1.data(), hd, heads, kvHeads, kvLen, scale, softCap);
    });
    int NT = wide ? 512 : 256, R = hd == 64 ? 4 : hd == 256 ? 1 : NT / 128;
    int group = heads / kvHeads;
    dim3 g{(unsigned)((T * group + R - 1) / R), (unsigned)kvHeads, 1};
    auto fk = [&] {
        const float* a = q.data(); const __half* b = kcp; const __half* c = vcp;
        float* o = o2.data(); const float* m = mask.data();
        if (wide) { fattn<128, 512>(a, b, c, m, &used, o, T, heads, kvHeads, kvLen, scale, softCap, keep); return; }
        switch (hd) {
        case 64: fattn<64, 256>(a, b, c, m, &used, o, T, heads, kvHeads, kvLen, scale, softCap, keep); break;
        case 96: fattn<96, 256>(a, b, c, m, &used, o, T, heads, kvHeads, kvLen, scale, softCap, keep); break;
        case 128: fattn<128, 256>(a, b, c, m, &used, o, T, heads, kvHeads, kvLen, scale, softCap, keep); break;
        case 256: fattn<256, 256>(a, b, c, m, &used, o, T, heads, kvHeads, kvLen, scale, softCap, keep); break;
        }
    };
    launch(g, NT, 220 * 1024, fk);
    int differ = 0;
    double maxd = 0;
    for (size_t i = 0; i < o1.size(); i++) {
        if (__float_as_uint(o1[i]) != __float_as_uint(o2[i])) differ++;
        maxd = std::max(maxd, (double)fabsf(o1[i] - o2[i]));
    }
    printf("off%d hd%d%s keep%d h%d kv%d past%d T%d kvLen%d cap%g q%g holes%d window%d used%d: %d of %zu differ (max |d| %g)\n", off, hd, wide ? "w" : "", keep,
           heads, kvHeads, past, T, kvLen, softCap, qScale, holes, window, used, differ, o1.size(), maxd);
    fflush(stdout);
    return differ;
}

int main() {
    int bad = 0;
    for (int keep = 0; keep < 2; keep++) {
        bad += run(64, 8, 2, 0, 2, 256, 0, 1, false, 0, false, keep, 1) != 0;
        bad += run(64, 8, 2, 200, 33, 256, 0, 1, false, 0, false, keep, 2) != 0;
        bad += run(64, 4, 4, 0, 44, 44, 0, 1, false, 0, false, keep, 3) != 0;
        bad += run(128, 8, 2, 37, 20, 300, 0, 4, false, 0, false, keep, 4) != 0;
        bad += run(128, 8, 2, 37, 20, 300, 0, 4, false, 0, true, keep, 14) != 0;
        bad += run(96, 4, 4, 5, 40, 256, 0, 1, true, 0, false, keep, 5) != 0;
        bad += run(256, 8, 4, 10, 17, 200, 50, 1, false, 0, false, keep, 6) != 0;
        bad += run(128, 14, 2, 100, 9, 230, 30, 2, false, 0, false, keep, 7) != 0;
        bad += run(64, 8, 8, 120, 40, 200, 0, 3, true, 0, false, keep, 8) != 0;
        // whole tiles hidden before and inside the window, first seen tile > 0
        bad += run(64, 4, 2, 300, 12, 330, 0, 1, false, 70, false, keep, 9) != 0;
        bad += run(128, 16, 4, 250, 8, 270, 0, 2, true, 100, true, keep, 10) != 0;
        // a cache whose used cells end before kvLen; one token
        bad += run(128, 8, 2, 0, 1, 200, 0, 1, false, 0, true, keep, 11) != 0;
        // caches 4-byte aligned only (the 4-byte copies); head size 96 over one KV head (12 chunks a row)
        bad += run(128, 8, 2, 37, 20, 300, 0, 4, false, 0, true, keep, 12, 2) != 0;
        bad += run(64, 8, 2, 200, 33, 256, 0, 1, true, 0, false, keep, 13, 2) != 0;
        bad += run(96, 3, 1, 5, 40, 256, 0, 1, true, 0, false, keep, 15) != 0;
        // s22: the four-row kernels (QUAD: head size 64, and 128 on 512 threads) with soft-capping, holes,
        // one query head a KV head and eight, odd token counts, a cache of many tiles, and windows
        bad += run(64, 8, 2, 30, 21, 300, 50, 2, true, 0, false, keep, 16) != 0;
        bad += run(128, 8, 2, 30, 21, 300, 30, 3, true, 0, true, keep, 17) != 0;
        bad += run(64, 4, 4, 600, 7, 700, 0, 2, false, 0, false, keep, 18) != 0;
        bad += run(128, 16, 2, 600, 5, 700, 20, 1, true, 0, true, keep, 19) != 0;
        bad += run(128, 8, 8, 3, 13, 64, 0, 4, false, 0, true, keep, 20) != 0;
        bad += run(64, 16, 2, 100, 9, 170, 0, 1, true, 40, false, keep, 21) != 0;
    }
    printf("%s\n", bad ? "FAIL" : "all bit-identical");
    return bad;
}
