// Shared helpers of Minfer's CUDA kernels. Compiled with --fmad=false so
// every a*b+c rounds twice, as the CPU backend computes it; the kernels
// follow core/backend/cpu and core/quant operation for operation where the
// result depends on it.
#pragma once
#include <cuda_fp16.h>
#include <stdint.h>

#define WARP 32

__device__ __forceinline__ float f16(const uint8_t* p) {
    uint16_t b = (uint16_t)p[0] | ((uint16_t)p[1] << 8);
    return __half2float(__ushort_as_half(b));
}
__device__ __forceinline__ float f32le(const uint8_t* p) {
    uint32_t b = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
    return __uint_as_float(b);
}
__device__ __forceinline__ float bf16bits(uint16_t b) { return __uint_as_float((uint32_t)b << 16); }
__device__ __forceinline__ uint32_t u32le(const uint8_t* p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
__device__ __forceinline__ int16_t i16le(const uint8_t* p) { return (int16_t)((uint16_t)p[0] | ((uint16_t)p[1] << 8)); }

// F32ToBF16 of core/quant: NaN keeps its sign and gets a quiet bit, the
// rest rounds to nearest even.
__device__ __forceinline__ uint16_t to_bf16(float f) {
    uint32_t b = __float_as_uint(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(b >> 16) | 0x40;
    return (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
__device__ __forceinline__ uint16_t to_f16(float f) { return __half_as_ushort(__float2half_rn(f)); }

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ double warp_sum_d(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ int warp_sum_i(int v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// scaleMinK4 of core/quant: the 6-bit scale and min of sub-block j.
__device__ __forceinline__ void scale_min_k4(int j, const uint8_t* s, int* sc, int* m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}
// scaleQ3K of core/quant.
__device__ __forceinline__ int scale_q3k(int j, const uint8_t* s) {
    int low = j < 8 ? (s[j] & 0xf) : (s[j - 8] >> 4);
    int high = (s[8 + (j % 4)] >> (2 * (j / 4))) & 3;
    return (low | (high << 4)) - 32;
}
