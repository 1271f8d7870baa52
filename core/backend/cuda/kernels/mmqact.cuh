// The tensor-core mat-muls' activation layout (mma.cu): per token kp int8
// values (qx), and per 16 elements a float scale (xs) and a float word
// (xm: the scaled sum of q8_1, the split sub-block sums of q8_K). The
// quantizers of one 32-group (mmq_q8_lane) and of one 256-element
// super-block (mmq_q8k_warp) are shared by mma.cu's mmq_act_* and by the
// kernels that write the layout as they produce the values (decode.cu's
// swiglu_mmq_*, norm_mmq); none has a multiply-add to contract, so the
// bits are the same under mma.cu's --fmad=true and decode.cu's false.
#pragma once
#include "common.cuh"

// mmq_q8_lane: element e (lane of a whole warp: the warp holds one
// 32-group b, v its value, zero past the row) of token t as quant_q8_0
// (withSum 0) or quant_q8_1 (withSum 1) computes it.
__device__ __forceinline__ void mmq_q8_lane(float v, int lane, int8_t* qx, float* xs, float* xm, long long t, int b, int kp, int withSum) {
    float amax = warp_max(fabsf(v));
    float id = amax != 0.f ? 127.f / amax : 0.f;
    int q = sat8(v * id);
    qx[t * kp + b * 32 + lane] = (int8_t)q;
    int sum = warp_sum_i(q);
    if (lane == 0) {
        float d = amax / 127.f;
        long long g = t * (kp / 16) + 2 * b;
        float dh = f16r(d);
        xs[g] = dh;
        xs[g + 1] = dh;
        xm[g] = withSum ? f16r(d * (float)sum) : 0.f;
        xm[g + 1] = 0.f;
    }
}

// mmq_q8k_warp: one super-block of 256 values as quantize_row_q8_K_ref
// (quant_q8_k) computes it, a lane holding the eight consecutive values
// v (elements 8·lane..8·lane+7); qb its int8 values, g0 its first scale
// word. xm holds, per super-block (16 words), the integer sums of its
// eight 32-element sub-blocks split as sum = 128·hi + lo (lo in 0..127,
// hi in −32..31) in bytes 32..47: lo of sub-blocks 0..7, then hi of 0..7
// (the B operand of the mins' mma, compute_step); the rest is zero.
__device__ __forceinline__ void mmq_q8k_warp(const float (&v)[8], int lane, int8_t* qb, float* xs, float* xm, long long g0) {
    // The largest magnitude, the first element that has it (every lane
    // ends with the same pair: the reduction is order-free).
    float a = fabsf(v[0]), sv = v[0];
    int idx = 8 * lane;
#pragma unroll
    for (int k = 1; k < 8; k++)
        if (fabsf(v[k]) > a) { a = fabsf(v[k]); sv = v[k]; idx = 8 * lane + k; }
    for (int o = 16; o > 0; o >>= 1) {
        float a2 = __shfl_xor_sync(0xffffffffu, a, o), s2 = __shfl_xor_sync(0xffffffffu, sv, o);
        int i2 = __shfl_xor_sync(0xffffffffu, idx, o);
        if (a2 > a || (a2 == a && i2 < idx)) { a = a2; sv = s2; idx = i2; }
    }
    if (a == 0.f) {
        *(int2*)(qb + 8 * lane) = make_int2(0, 0);
        if (lane < 16) { xs[g0 + lane] = 0.f; xm[g0 + lane] = 0.f; }
        return;
    }
    float iscale = -127.f / sv; // sv: the signed value at idx
    int s = 0;
    uint32_t packed[2] = {0, 0};
#pragma unroll
    for (int k = 0; k < 8; k++) {
        int q = __float2int_rn(iscale * v[k]);
        if (q > 127) q = 127;
        s += q;
        packed[k >> 2] |= (uint32_t)(q & 0xff) << (8 * (k & 3));
    }
    *(int2*)(qb + 8 * lane) = make_int2((int)packed[0], (int)packed[1]);
    // The sums of the eight sub-blocks (four lanes each), to every lane.
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    s += __shfl_xor_sync(0xffffffffu, s, 2);
    int sbs[8];
#pragma unroll
    for (int k = 0; k < 8; k++) sbs[k] = __shfl_sync(0xffffffffu, s, 4 * k);
    float d = 1.f / iscale;
    if (lane < 16) {
        xs[g0 + lane] = d;
        uint32_t word = 0;
        if (lane >= 8 && lane < 12) {
            // bytes 4(lane-8)..: lo (lanes 8, 9) or hi (10, 11) of four sub-blocks
            const bool upper = lane & 1; // (a select, not an index: sbs stays in registers)
#pragma unroll
            for (int k = 0; k < 4; k++) {
                int sv = upper ? sbs[4 + k] : sbs[k];
                uint32_t byte = lane < 10 ? (uint32_t)(sv & 127) : (uint32_t)(sv >> 7) & 0xffu;
                word |= byte << (8 * k);
            }
        }
        ((uint32_t*)xm)[g0 + lane] = word;
    }
}
