// Host emulation driver for emu_mv.sh (session 19; argument q4 or q6: one
// type only): the split mat-vecs
// mvk_q4_k_1 and mvk_q6_k_1 against mvs_*_1 and mvp_*_1, bit
// for bit, over random weights and activations: rows of 56, 43, 22, 9, 57,
// 1 and 64+ blocks, row counts not a multiple of the block's rows (MVK_R,
// and 2 and 8: mvk_*_1r2, mvk_*_1r8), warps per block from one slice a
// warp (the launch code's choice) down to one warp looping over every
// slice.
#include "shim.h"
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

static uint16_t h16(float f) { return __half_as_ushort(__float2half_rn(f)); }

// q8_K activations: d, 256 int8, 16 int16 block sums.
static void fillX(uint8_t* X, int nblk, std::mt19937& rng) {
    std::uniform_int_distribution<int> q(-128, 127);
    std::uniform_real_distribution<float> U(0.001f, 0.02f);
    for (int b = 0; b < nblk; b++) {
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

// Random weight blocks of bs bytes whose halves at hoff (count nh) are finite.
static void fillW(uint8_t* W, size_t nb, int bs, const int* hoff, int nh, std::mt19937& rng) {
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> U(-0.05f, 0.05f);
    for (size_t b = 0; b < nb; b++) {
        uint8_t* wb = W + b * bs;
        for (int i = 0; i < bs; i++) wb[i] = (uint8_t)byte(rng);
        for (int k = 0; k < nh; k++) {
            uint16_t h = h16(U(rng));
            memcpy(wb + hoff[k], &h, 2);
        }
    }
}

static int compare(const char* what, const float* ref, const float* got, int n) {
    int diff = 0, first = -1;
    for (int i = 0; i < n; i++)
        if (memcmp(&ref[i], &got[i], 4) != 0) {
            diff++;
            if (first < 0) first = i;
        }
    if (diff)
        printf("%s: %d of %d DIFFER (first row %d: ref %.9g got %.9g)\n", what, diff, n, first, ref[first], got[first]);
    else
        printf("%s: %d of %d bit for bit (out[0] %.9g)\n", what, n - diff, n, got[0]);
    return diff != 0;
}

enum { Q4K, Q6K };

static int run(int type, int nblk, int rows, std::vector<int> warpsList, unsigned seed) {
    const int bs = type == Q4K ? 144 : 210;
    const char* tn = type == Q4K ? "q4_k" : "q6_k";
    std::mt19937 rng(seed);
    const long long wrb = (long long)nblk * bs, xrb = (long long)nblk * 292;
    Buf W((size_t)rows * wrb), X(xrb + 16);
    const int h4[2] = {0, 2}, h6[1] = {208};
    if (type == Q4K) fillW(W.p, (size_t)rows * nblk, bs, h4, 2, rng);
    else fillW(W.p, (size_t)rows * nblk, bs, h6, 1, rng);
    fillX(X.p, nblk, rng);
    std::vector<float> ref(rows, -7.f), pip(rows, -8.f);
    int rc = 0;
    char name[160];
    // mvs_*_1: whole rows staged, four warps a block.
    {
        const int nw = 4;
        const size_t sm = nw * wrb + ((xrb + 15) & ~15LL);
        launch((rows + nw - 1) / nw, 32 * nw, sm, [&] {
            if (type == Q4K) dc::mvs_q4_k_1(W.p, X.p, ref.data(), rows, nblk, wrb, xrb, 1);
            else dc::mvs_q6_k_1(W.p, X.p, ref.data(), rows, nblk, wrb, xrb, 1);
        });
    }
    // mvp_*_1 (rows of a multiple of 16 bytes), four warps a block.
    if (wrb % 16 == 0) {
        const int nw = 4;
        const size_t sm = ((xrb + 15) & ~15LL) + nw * MVP_S * 8 * bs;
        launch((rows + nw - 1) / nw, 32 * nw, sm, [&] {
            if (type == Q4K) dc::mvp_q4_k_1(W.p, X.p, pip.data(), rows, nblk, wrb, xrb, 1);
            else dc::mvp_q6_k_1(W.p, X.p, pip.data(), rows, nblk, wrb, xrb, 1);
        });
        snprintf(name, sizeof name, "mvp_%s_1   vs mvs_%s_1 nblk %3d rows %3d", tn, tn, nblk, rows);
        rc |= compare(name, ref.data(), pip.data(), rows);
    }
    // MVK_R rows a block (mvk_*_1) over every warp count of warpsList; two and eight (mvk_*_1r2, _1r8) over the first.
    for (int R : {MVK_R, 2, 8}) {
        for (int nw : warpsList) {
            std::vector<float> got(rows, -9.f);
            const size_t sm = (size_t)nw * R * 8 * bs + (size_t)R * nblk * 4;
            launch((rows + R - 1) / R, 32 * nw, sm, [&] {
                if (type == Q4K) {
                    if (R == MVK_R) dc::mvk_q4_k_1(W.p, X.p, got.data(), rows, nblk, wrb, xrb, 1);
                    else if (R == 2) dc::mvk_q4_k_1r2(W.p, X.p, got.data(), rows, nblk, wrb, xrb, 1);
                    else dc::mvk_q4_k_1r8(W.p, X.p, got.data(), rows, nblk, wrb, xrb, 1);
                } else {
                    if (R == MVK_R) dc::mvk_q6_k_1(W.p, X.p, got.data(), rows, nblk, wrb, xrb, 1);
                    else if (R == 2) dc::mvk_q6_k_1r2(W.p, X.p, got.data(), rows, nblk, wrb, xrb, 1);
                    else dc::mvk_q6_k_1r8(W.p, X.p, got.data(), rows, nblk, wrb, xrb, 1);
                }
            });
            snprintf(name, sizeof name, "mvk_%s_1%s vs mvs_%s_1 nblk %3d rows %3d warps %d", tn, R == MVK_R ? "  " : R == 2 ? "r2" : "r8", tn, nblk, rows, nw);
            rc |= compare(name, ref.data(), got.data(), rows);
            if (R != MVK_R) break;
        }
    }
    return rc;
}

// The launch code's warps (matvec.go's splitWarps): one slice of eight blocks a warp, at most splitMaxWarps (8).
static int warpsFor(int nblk) { return std::min((nblk + 7) / 8, 8); }

int main(int argc, char** argv) {
    int rc = 0;
    unsigned seed = 19;
    const std::string only = argc > 1 ? argv[1] : "";
    for (int t : {Q4K, Q6K}) {
        if ((only == "q4" && t != Q4K) || (only == "q6" && t != Q6K)) continue;
        // Q6_K rows take the split kernel only as whole 16-byte multiples (nblk a multiple of 8).
        std::vector<int> shapes = t == Q4K ? std::vector<int>{56, 43, 22, 9, 57, 1, 72} : std::vector<int>{56, 48, 8, 64, 72};
        for (int nblk : shapes) {
            for (int rows : {13, 4, 3}) {
                std::vector<int> ws = {warpsFor(nblk)};
                if (rows == 13) {
                    if (warpsFor(nblk) > 1) ws.push_back(1);
                    if (warpsFor(nblk) > 3) ws.push_back(3);
                }
                rc |= run(t, nblk, rows, ws, seed++);
            }
        }
    }
    printf(rc ? "FAIL\n" : "all bit for bit\n");
    return rc;
}
