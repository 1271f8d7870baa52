#!/bin/bash
# Host emulation of the exact flash attention (kernels/fattn.cu: fattn_f16_64/96/128/256 and the 512-thread
# fattn_f16_128w, scores kept or computed again) against attention_f16 (ops.cu), which the device tests hold to
# the CPU, bit for bit; session 16 moved the mask reads into one up-front scan (a bit a tile) and puts the next
# tile's K/V in flight with cp.async (emulated as immediate copies: values, not races or timing, are checked).
# Session 1's shim. Usage (repository root): bench/results/2026-12-06-s16-emu/emu_fa.sh
set -eu
K=$PWD/core/backend/cuda/kernels
E=$(cd "$(dirname "$0")" && pwd)
S=$E/../2026-12-01-cudaexact/emu
W=$(mktemp -d)
cp "$S"/shim.h "$E"/fa_main.cpp "$E"/shim_fa.h "$E"/../2026-12-06-s15-emu/shim_dec.h "$W"/
cd "$W"
sed 's/#include <cuda_fp16.h>/#include "shim.h"\n#include "shim_dec.h"\n#include "shim_fa.h"/; s|asm volatile("// minfer-pdl-wait" ::: "memory")|(void)0|; s|asm volatile("// minfer-pdl-launch" ::: "memory")|(void)0|' "$K/common.cuh" > common.cuh
sed -n '/^\/\/ attn_used/,$p' "$K/ops.cu" | sed 's/extern __shared__ float smem\[\];/float* smem = (float*)g_dyn;/' > ops_attn.inc
python3 - "$K/fattn.cu" <<'PY'
import sys, re
s = open(sys.argv[1]).read().replace('#include "common.cuh"', '')
s = re.sub(r'__device__ __forceinline__ void fa_cp4\(void\* dst, const void\* src\) \{.*?\n\}',
           '__device__ __forceinline__ void fa_cp4(void* dst, const void* src) { memcpy(dst, src, 4); }', s, flags=re.S)
s = s.replace('asm volatile("cp.async.commit_group;");', '').replace('asm volatile("cp.async.wait_group 0;" ::: "memory");', '')
s = s.replace('extern __shared__ __align__(16) uint8_t fa_smem[];', 'uint8_t* fa_smem = g_dyn;')
s = s.replace('extern "C" ', '').replace('PDL_ENTRY();', '')
open('fattn.inc', 'w').write(s)
PY
F="-std=c++20 -O1 -ffp-contract=off -fno-strict-aliasing -pthread -w"
g++ $F -o fa fa_main.cpp 2>&1 | grep -E "error" | head -30
./fa
rc=$?
rm -rf "$W"
exit $rc
