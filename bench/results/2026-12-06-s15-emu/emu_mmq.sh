#!/bin/bash
# (Session 16: the Q4_K / Q5_K 16-byte compact copies at aligned weights, and weights off alignment: the 4-byte copies.
# Session 22: cp_async_wait0, which the pipelined loop waits with since.)
# Usage: emu_mmq.sh [type], e.g. q4_k.)
# Host emulation of the pipelined tensor-core mat-muls (mma.cu's mmqp_*, 64-token tiles, and mmqw_*, 128-token
# tiles, the default for long chunks since session 15) against the plain mmq_* (which
# ../2026-12-01-cudaexact/emu/emu.sh holds to the batched mat-vec), bit for bit: one weight, and three weights
# of one launch (q/k/v, gate/up) whose row tiles end part way. cp.async as immediate copies (the zero fill
# included), the dynamic shared memory size from the launch. Session 1's shim. Usage (repository root):
# bench/results/2026-12-06-s15-emu/emu_mmq.sh
set -eu
K=$PWD/core/backend/cuda/kernels
E=$(cd "$(dirname "$0")" && pwd)
S=$E/../2026-12-01-cudaexact/emu
W=$(mktemp -d)
cp "$S"/shim.h "$S"/emu_launch.h "$E"/mmq_main.cpp "$E"/shim_dec.h "$W"/
cd "$W"
sed 's/#include <cuda_fp16.h>/#include "shim.h"\n#include "shim_dec.h"/; s|asm volatile("// minfer-pdl-wait" ::: "memory")|(void)0|; s|asm volatile("// minfer-pdl-launch" ::: "memory")|(void)0|' "$K/common.cuh" > common.cuh
python3 - "$K/mma.cu" <<'PY'
import sys, re
s = open(sys.argv[1]).read().replace('#include "common.cuh"', '')
a = s.index('__device__ __forceinline__ void mma_k32(int* c'); b = s.index('// One k-step of a tile in shared memory')
s = s[:a] + '''__device__ __forceinline__ void mma_k32(int* c, const int* a, const int* b) { mma_emu(c, a, b, 32, false); }
__device__ __forceinline__ void mma_k16(int* c, const int* a, int b) { mma_emu(c, a, &b, 16, false); }
__device__ __forceinline__ void mma_k32_acc(int* c, const int* a, const int* b) { mma_emu(c, a, b, 32, true); }
__device__ __forceinline__ void mma_k16_acc(int* c, const int* a, int b) { mma_emu(c, a, &b, 16, true); }
__device__ __forceinline__ void ldsm4(int* r, const void* p) { ldsm_emu(r, p); }
''' + s[b:]
a = s.index('__device__ __forceinline__ void cp_async4n('); b = s.index('template <int T, int NT>\n__device__ void mmqp(')
s = s[:a] + '''__device__ __forceinline__ void cp_async4n(void* dst, const void* src, int n) { uint8_t w[4] = {0, 0, 0, 0}; memcpy(w, src, n); memcpy(dst, w, 4); }
__device__ __forceinline__ void cp_async16z(void* dst, const void* src, bool ok) { if (ok) memcpy(dst, src, 16); else memset(dst, 0, 16); }
__device__ __forceinline__ void cp_async_commit() {}
__device__ __forceinline__ void cp_async_wait1() {}
__device__ __forceinline__ void cp_async_wait0() {}
''' + s[b:]
s = s.replace('asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dsz));', 'dsz = g_dyn_size;')
s = s.replace('extern __shared__ __align__(16) uint8_t mmq_smem[];', 'uint8_t* mmq_smem = g_dyn;')
s = s.replace('__shared__ __align__(16) int8_t', 'alignas(16) static int8_t')
s = s.replace('extern "C" ', '')
open('mma.inc', 'w').write(s)
PY
F="-std=c++20 -O1 -ffp-contract=off -fno-strict-aliasing -pthread -w"
g++ $F -o mmq mmq_main.cpp 2>&1 | grep -E "error" | head -30
./mmq "$@"
rc=$?
rm -rf "$W"
exit $rc
