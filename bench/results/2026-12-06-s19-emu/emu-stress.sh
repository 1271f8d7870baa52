#!/bin/bash
# Host emulation of the CUDA prefill kernels (helper cudaexact): the
# kernels' own source, compiled with g++ through shim.h (a block's threads
# as std::threads with barriers; warp shuffles and mma.sync .s8 fragments
# exchanged through per-warp buffers; float intrinsics as IEEE float ops,
# no contraction), compared bit for bit against the kernels already shown
# bit-exact against the CPU on the device:
#   attn: fattn_f16_* (kernels/fattn.cu; brought to today's kernels in session 16) vs attention_f16 (ops.cu);
#   mma:  mmq_* (kernels/mma.cu, unpipelined; mmqp_* share its decode and
#         compute_step) vs quant.cu's quantizers + batched matvec_*_b.
# s19 stress copy (emu-stress.sh): 2026-12-01-cudaexact/emu/emu.sh with threads tid % 64 == 5 sleeping
# 200 us before each score and attn_stress_main.cpp (the 512-thread kernel's shapes, two with many tiles).
# Usage: bench/results/2026-12-06-s19-emu/emu-stress.sh attn
# (was: bench/results/2026-12-01-cudaexact/emu/emu.sh [attn|mma]) (from the
# repository root); writes into a temporary directory.
set -eu
K=$PWD/core/backend/cuda/kernels
S=$(cd "$(dirname "$0")" && pwd)
E=$S/../2026-12-01-cudaexact/emu
W=$(mktemp -d)
cp "$E"/shim.h "$E"/emu_launch.h "$E"/mma_main.cpp "$W"/
cp "$S"/attn_stress_main.cpp "$W"/attn_main.cpp
cd "$W"
sed 's/#include <cuda_fp16.h>/#include "shim.h"/; s|asm volatile("// minfer-pdl-wait" ::: "memory")|(void)0|; s|asm volatile("// minfer-pdl-launch" ::: "memory")|(void)0|' "$K/common.cuh" > common.cuh
sed -n '/^\/\/ attn_used/,$p' "$K/ops.cu" | sed 's/extern __shared__ float smem\[\];/float* smem = (float*)g_dyn;/' > ops_attn.inc
python3 - "$K/fattn.cu" <<'PY'
import sys, re
s = open(sys.argv[1]).read().replace('#include "common.cuh"', '')
# cp.async as an immediate copy (the waits then have nothing to wait for)
s = re.sub(r'__device__ __forceinline__ void fa_cp4\(void\* dst, const void\* src\) \{.*?\n\}',
           '__device__ __forceinline__ void fa_cp4(void* dst, const void* src) { memcpy(dst, src, 4); }', s, flags=re.S)
s = re.sub(r'__device__ __forceinline__ void fa_cp16\(void\* dst, const void\* src\) \{.*?\n\}',
           '__device__ __forceinline__ void fa_cp16(void* dst, const void* src) { memcpy(dst, src, 16); }', s, flags=re.S)
s = s.replace('asm volatile("cp.async.commit_group;");', '').replace('asm volatile("cp.async.wait_group 0;" ::: "memory");', '')
s = s.replace('extern __shared__ __align__(16) uint8_t fa_smem[];', 'uint8_t* fa_smem = g_dyn;')
s = s.replace('extern "C" ', '').replace('PDL_ENTRY();', '')
# stress (s19): some threads (tid % 64 == 5) sleep 200 us before each score, so the others run ahead
# to the next tile's barrier: a tile buffer overwritten too early shows as differing bits
n = s.count('            float s = -INFINITY;\n')
assert n == 1, n
s = s.replace('            float s = -INFINITY;\n', '            float s = -INFINITY;\n            if (threadIdx.x % 64 == 5) std::this_thread::sleep_for(std::chrono::microseconds(200));\n')
open('fattn.inc', 'w').write(s)
PY
sed 's/#include "common.cuh"//' "$K/quant.cu" > quant.inc
python3 - "$K/mma.cu" <<'PY'
import sys
s = open(sys.argv[1]).read().replace('#include "common.cuh"', '')
a = s.index('__device__ __forceinline__ void mma_k32(int* c'); b = s.index('// One k-step of a tile in shared memory')
s = s[:a] + '''__device__ __forceinline__ void mma_k32(int* c, const int* a, const int* b) { mma_emu(c, a, b, 32, false); }
__device__ __forceinline__ void mma_k16(int* c, const int* a, int b) { mma_emu(c, a, &b, 16, false); }
__device__ __forceinline__ void mma_k32_acc(int* c, const int* a, const int* b) { mma_emu(c, a, b, 32, true); }
__device__ __forceinline__ void mma_k16_acc(int* c, const int* a, int b) { mma_emu(c, a, &b, 16, true); }
__device__ __forceinline__ void ldsm4(int* r, const void* p) { ldsm_emu(r, p); }
''' + s[b:]
a = s.index('// ------------------------------------------------------ pipelined (mmqp)'); b = s.index('#define MMQ(name, T)')
s = s[:a] + s[b:]
a = s.index('#define MMQ(name, T)'); b = s.index('MMQ(q4_0, Q4_0)')
s = s[:a] + '''#define MMQ(name, T) \\
    extern "C" void mmq_##name(const uint8_t* W0, const uint8_t* W1, const uint8_t* W2, float* out0, float* out1, float* out2, int rows0, \\
                               int rows1, int rows2, int tiles0, int tiles01, const int8_t* qx, const float* xs, const float* xm, int n, int kp, \\
                               long long wrb, int ntok) { mmq<T>(W0, W1, W2, out0, out1, out2, rows0, rows1, rows2, tiles0, tiles01, qx, xs, xm, n, kp, wrb, ntok); }
''' + s[b:]
s = s.replace('__shared__ __align__(16) int8_t', 'alignas(16) static int8_t')
open('mma.inc', 'w').write(s)
PY
F="-std=c++20 -O1 -ffp-contract=off -fno-strict-aliasing -pthread -w"
rc=0
if [ "${1:-attn}" = attn ] || [ "${1:-}" = "" ]; then g++ $F -o attn attn_main.cpp && ./attn || rc=1; fi
if [ "${1:-}" = mma ] || [ "${1:-}" = "" ]; then g++ $F -o mma mma_main.cpp && ./mma || rc=1; fi
rm -rf "$W"
exit $rc
