// Host emulation of the CUDA rms_norm means (helper normexact): each
// kernel's norm output against the CPU's serial chain, bit for bit, on
// random rows and on tie rows (the serial mean exactly the float32 tie
// 1 + 2^-24, a parallel sum above it). Built by emu.sh with the cudaexact
// shim.
#include "shim.h"
#include <cstdio>
#include <random>
thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
std::barrier<>* g_block_bar;
std::barrier<>* g_warp_bar[32];
std::atomic<int> g_or{0};
uint64_t g_shfl[32][32];
uint8_t* g_dyn;
template <class T> T __ldcg(const T* p) { return *p; }
inline void __threadfence() {}
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
#include "common.cuh"
#include "norm.inc"

static std::vector<uint8_t> dynbuf(256 * 1024);
void launch(dim3 grid, int threads, std::function<void()> k) {
    blockDim = dim3{(unsigned)threads, 1, 1};
    gridDim = grid;
    for (unsigned by = 0; by < grid.y; by++)
        for (unsigned bx = 0; bx < grid.x; bx++) {
            std::fill(dynbuf.begin(), dynbuf.end(), 0xff);
            g_dyn = dynbuf.data();
            std::barrier<> bb(threads);
            g_block_bar = &bb;
            for (int w = 0; w < threads / 32; w++) g_warp_bar[w] = new std::barrier<>(32);
            std::vector<std::thread> ts;
            for (int t = 0; t < threads; t++)
                ts.emplace_back([&, t] { threadIdx = dim3{(unsigned)t, 0, 0}; blockIdx = dim3{bx, by, 0}; k(); });
            for (auto& t : ts) t.join();
            for (int w = 0; w < threads / 32; w++) delete g_warp_bar[w];
        }
}

static float fmul(float a, float b) { volatile float r = a * b; return r; }
static float fadd(float a, float b) { volatile float r = a + b; return r; }

// The CPU's rms_norm of v (core/backend/cpu: serial double sum of the
// float32 squares, float32 mean, float32 scale).
std::vector<float> cpu_norm(const std::vector<float>& v, float eps) {
    double s = 0;
    for (float e : v) s += (double)fmul(e, e);
    float mean = (float)(s / (double)v.size());
    float scale = 1.f / (float)sqrt((double)(mean + eps));
    std::vector<float> o(v.size());
    for (size_t i = 0; i < v.size(); i++) o[i] = fmul(v[i], scale);
    return o;
}

const float eps = 1e-5f;

// tie_row is core/backend/cpu's tieRow (normsum_test.go) with the big
// elements first: n = 2^p, the serial mean exactly the float32 tie between
// m = 2 + 2k·2^-22 and its successor (the serial chain rounds to m), a
// parallel sum above it; k the first whose two roundings give different
// scales.
static float scale_of(float m) { return 1.f / (float)sqrt((double)(m + eps)); }
std::vector<float> tie_row(int p, std::mt19937& rng) {
    int k = 0;
    for (;; k++) {
        float m = 2 + (float)(2 * k) * 0x1p-22f;
        if (scale_of(m) != scale_of(nextafterf(m, 4))) break;
    }
    std::vector<float> big;
    auto add = [&](int e) {
        if (e % 2 == 0) big.push_back(ldexpf(1, e / 2));
        else big.push_back(ldexpf(1, (e - 1) / 2)), big.push_back(ldexpf(1, (e - 1) / 2));
    };
    add(p + 1);
    add(p - 23);
    for (int b = 0; k >> b; b++)
        if (k >> b & 1) add(p - 20 + b);
    int n = 1 << p, e = p - 54;
    if (e % 2) e--;
    float tiny = ldexpf(1, e / 2);
    std::vector<float> x(n);
    for (auto& v : x) v = rng() % 2 ? tiny : fmul(sqrtf(1.5f), tiny);
    std::copy(big.begin(), big.end(), x.begin());
    return x;
}

template <class T> int diff(const std::vector<T>& a, const std::vector<T>& b) {
    int d = 0;
    for (size_t i = 0; i < a.size(); i++) d += memcmp(&a[i], &b[i], sizeof(T)) != 0;
    return d;
}

// One row through every kernel; returns the number of kernels whose norm
// differs from the CPU's.
int row_case(const char* what, const std::vector<float>& x, const std::vector<float>& y, bool add) {
    int n = x.size();
    std::vector<float> v(n);
    for (int i = 0; i < n; i++) v[i] = add ? fadd(x[i], y[i]) : x[i];
    std::vector<float> want = cpu_norm(v, eps);
    int bad = 0;
    auto report = [&](const char* k, int threads, const std::vector<float>& got) {
        int d = diff(got, want);
        printf("%-6s n=%-5d add=%d %-12s threads=%-4d: %d of %d norm values differ\n", what, n, add, k, threads, d, n);
        bad += d != 0;
    };
    if (!add) {
        for (int th : {256, 1024}) {
            std::vector<float> o(n, 7.f);
            launch(dim3{1, 1, 1}, th, [&] { rms_norm(x.data(), o.data(), nullptr, nullptr, n, 1, eps); });
            report("rms_norm", th, o);
        }
    }
    long long xrb = n / 32 * 34;
    {
        std::vector<float> s(n), o(n, 7.f);
        std::vector<uint8_t> q(xrb);
        int th = std::min(1024, std::max(256, (n + 255) / 256 * 256));
        launch(dim3{1, 1, 1}, th, [&] { norm_quant(x.data(), add ? y.data() : nullptr, add ? s.data() : nullptr, o.data(), nullptr, nullptr, q.data(), n, 1, eps, QT_Q8_0, xrb); });
        report("norm_quant", th, o);
    }
    if (n <= MVN_MAXK * 256) {
        std::vector<float> s(n), o(n, 7.f);
        std::vector<uint8_t> q(xrb), xs(xrb + 4096);
        unsigned counter = 0;
        launch(dim3{3, 1, 1}, 256, [&] {
            static uint8_t scratch[MVN_SCRATCH + 64];
            mvn_prologue(xs.data(), scratch, x.data(), add ? y.data() : nullptr, add ? s.data() : nullptr, o.data(), nullptr, nullptr, q.data(), n, eps, QT_Q8_0, xrb,
                         &counter);
        });
        report("mvn_prologue", 256, o);
    }
    for (int th : {64, 256}) {
        std::vector<float> s(n), o(n, 7.f), vs(n);
        std::vector<uint8_t> q(xrb);
        launch(dim3{1, 1, 1}, th, [&] {
            static uint8_t scratch[2048];
            norm_tail(scratch, vs.data(), x.data(), add ? y.data() : nullptr, add ? s.data() : nullptr, o.data(), nullptr, nullptr, q.data(), n, eps, QT_Q8_0, xrb);
        });
        report("norm_tail", th, o);
    }
    return bad;
}

int main() {
    std::mt19937 rng(91);
    std::uniform_real_distribution<float> U(-2.f, 2.f);
    int badRandom = 0, badTie = 0;
    for (int n : {512, 2048, 4096, 5632})
        for (int add = 0; add < 2; add++) {
            std::vector<float> x(n), y(n);
            for (auto& e : x) e = U(rng);
            for (auto& e : y) e = U(rng);
            badRandom += row_case("random", x, y, add);
        }
    for (int p : {9, 10, 11, 12, 13})
        for (int add = 0; add < 2; add++) {
            std::vector<float> x = tie_row(p, rng), y(x.size(), 0.f);
            badTie += row_case("tie", x, y, add);
        }
    printf("kernel runs whose norm differs from the CPU's: %d on random rows, %d on tie rows\n", badRandom, badTie);
    return badRandom + badTie != 0;
}
