// Host emulation shim for Minfer's attention kernels (test only).
#pragma once
#include <cstdint>
#include <cstring>
#include <cmath>
#include <algorithm>
#include <barrier>
#include <atomic>
#include <thread>
#include <vector>
#include <functional>
using std::min; using std::max; using std::isinf;
#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) alignas(n)
struct dim3 { unsigned x = 0, y = 0, z = 0; };
extern thread_local dim3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;
struct __half { uint16_t x; };
struct __half2 { __half x, y; };
inline float __half2float(__half h) { _Float16 f; memcpy(&f, &h.x, 2); return (float)f; }
inline __half __float2half_rn(float v) { _Float16 f = (_Float16)v; __half h; memcpy(&h.x, &f, 2); return h; }
inline __half __ushort_as_half(uint16_t b) { return __half{b}; }
inline uint16_t __half_as_ushort(__half h) { return h.x; }
inline __half2 __floats2half2_rn(float a, float b) { return __half2{__float2half_rn(a), __float2half_rn(b)}; }
struct float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return float4{a, b, c, d}; }
struct alignas(8) int2 { int x, y; };
inline int2 make_int2(int a, int b) { return int2{a, b}; }
inline float2 __half22float2(__half2 h) { return float2{__half2float(h.x), __half2float(h.y)}; }
inline float2 make_float2(float a, float b) { return float2{a, b}; }
inline float __fadd_rn(float a, float b) { volatile float r = a + b; return r; }
inline float __fsub_rn(float a, float b) { volatile float r = a - b; return r; }
inline float __fmul_rn(float a, float b) { volatile float r = a * b; return r; }
inline float __fdiv_rn(float a, float b) { volatile float r = a / b; return r; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline float __uint_as_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
inline uint32_t __float_as_uint(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
inline float __int_as_float(int u) { float f; memcpy(&f, &u, 4); return f; }
inline int __float_as_int(float f) { int u; memcpy(&u, &f, 4); return u; }
#define __noinline__
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline uint32_t __byte_perm(uint32_t a, uint32_t, uint32_t) { return a; }
inline float __expf(float x) { return expf(x); }
// block sync
extern std::barrier<>* g_block_bar;
extern std::barrier<>* g_warp_bar[32];
extern std::atomic<int> g_or;
extern uint64_t g_shfl[32][32];
inline void __syncthreads() { g_block_bar->arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { g_warp_bar[threadIdx.x >> 5]->arrive_and_wait(); }
inline int __syncthreads_or(int p) {
    g_block_bar->arrive_and_wait();
    if (p) g_or.fetch_or(1);
    g_block_bar->arrive_and_wait();
    int r = g_or.load();
    g_block_bar->arrive_and_wait();
    if (threadIdx.x == 0) g_or.store(0);
    g_block_bar->arrive_and_wait();
    return r;
}
template <class T> T __shfl_xor_sync(unsigned, T v, int o) {
    int w = threadIdx.x >> 5, l = threadIdx.x & 31;
    uint64_t s = 0; memcpy(&s, &v, sizeof(T));
    g_shfl[w][l] = s;
    g_warp_bar[w]->arrive_and_wait();
    uint64_t r = g_shfl[w][l ^ o];
    g_warp_bar[w]->arrive_and_wait();
    T out; memcpy(&out, &r, sizeof(T)); return out;
}
extern uint8_t* g_dyn;
struct alignas(16) uint4 { uint32_t x, y, z, w; };
inline uint4 make_uint4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return uint4{a, b, c, d}; }
inline uint32_t __vsub4(uint32_t a, uint32_t b) {
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) r |= (uint32_t)(uint8_t)(((a >> (8 * i)) & 0xff) - ((b >> (8 * i)) & 0xff)) << (8 * i);
    return r;
}
inline int __float2int_rn(float v) { return (int)nearbyintf(v); }
inline int __dp4a(int a, int b, int c) {
    for (int i = 0; i < 4; i++) c += (int)(int8_t)(a >> (8 * i)) * (int)(int8_t)(b >> (8 * i));
    return c;
}
template <class T> T __shfl_sync(unsigned, T v, int src) {
    int w = threadIdx.x >> 5, l = threadIdx.x & 31;
    uint64_t s = 0; memcpy(&s, &v, sizeof(T));
    g_shfl[w][l] = s;
    g_warp_bar[w]->arrive_and_wait();
    uint64_t r = g_shfl[w][src & 31];
    g_warp_bar[w]->arrive_and_wait();
    T out; memcpy(&out, &r, sizeof(T)); return out;
}
extern int g_mA[32][32][4], g_mB[32][32][2];
// mma.sync m16n8k32 / m16n8k16 .s8.s8.s32 (row.col), the PTX fragment layouts.
inline void mma_emu(int* c, const int* a, const int* b, int K, bool acc) {
    int w = threadIdx.x >> 5, l = threadIdx.x & 31, g = l >> 2, t4 = l & 3;
    for (int i = 0; i < (K == 32 ? 4 : 2); i++) g_mA[w][l][i] = a[i];
    for (int i = 0; i < (K == 32 ? 2 : 1); i++) g_mB[w][l][i] = b[i];
    g_warp_bar[w]->arrive_and_wait();
    auto byte = [](int v, int k) { return (int)(int8_t)(v >> (8 * k)); };
    int r[4];
    for (int i = 0; i < 4; i++) {
        int row = g + 8 * (i >> 1), col = 2 * t4 + (i & 1), s = 0;
        for (int k = 0; k < K; k++) {
            int areg = (row >= 8 ? 1 : 0) + (k >= 16 ? 2 : 0), alane = (row % 8) * 4 + (k % 16) / 4;
            int breg = k >= 16 ? 1 : 0, blane = col * 4 + (k % 16) / 4;
            s += byte(g_mA[w][alane][areg], k % 4) * byte(g_mB[w][blane][breg], k % 4);
        }
        r[i] = s;
    }
    g_warp_bar[w]->arrive_and_wait();
    for (int i = 0; i < 4; i++) c[i] = acc ? c[i] + r[i] : r[i];
}
// Since session 17: ldmatrix .x4 (mma.cu's ldsm4): lanes 8i..8i+7 give the 16-byte rows of matrix i; lane l gets
// bytes 4(l%4)..4(l%4)+3 of row l/4 of each matrix (exchanged through the shuffle buffer).
inline void ldsm_emu(int* r, const void* p) {
    int w = threadIdx.x >> 5, l = threadIdx.x & 31;
    g_shfl[w][l] = (uint64_t)(uintptr_t)p;
    g_warp_bar[w]->arrive_and_wait();
    for (int i = 0; i < 4; i++) memcpy(&r[i], (const uint8_t*)(uintptr_t)g_shfl[w][8 * i + l / 4] + 4 * (l % 4), 4);
    g_warp_bar[w]->arrive_and_wait();
}
// Since session 16: what fattn.cu's mask scan and ops.cu's attn_used (since session 8) use.
inline unsigned atomicOr(unsigned* p, unsigned v) { return std::atomic_ref<unsigned>(*p).fetch_or(v); }
inline int __ffs(unsigned x) { return __builtin_ffs(x); }
inline int atomicMax(int* p, int v) {
    std::atomic_ref<int> a(*p);
    int o = a.load();
    while (o < v && !a.compare_exchange_weak(o, v)) {}
    return o;
}
inline unsigned __reduce_max_sync(unsigned, unsigned v) {
    for (int o = 16; o > 0; o >>= 1) v = std::max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
inline unsigned max(int a, unsigned b) /* CUDA's max of mixed ints */ { return std::max((unsigned)a, b); }
