#!/bin/bash
# Host emulation of session 19's fused gate+up mat-vec with the swiglu and
# its quantization (decode.cu's mvs_*_w) with session 1's shim
# (../2026-12-01-cudaexact/emu/shim.h: a block's threads as std::threads
# with barriers, shuffles through per-warp buffers, float intrinsics as
# IEEE float ops with no contraction) and session 15's additions
# (../2026-12-06-s15-emu/shim_dec.h: __threadfence, atomicAdd, __ldcg);
# cp.async as a plain copy, its commits and waits and the PDL marks as
# nothing, prefetch_l2 nothing. Compared bit for bit against mvs_*_m then swiglu_quant (today's
# two launches, which the device tests hold to the CPU).
# Usage (from the repository root): bench/results/2026-12-06-s19-swemu/emu_sw.sh [q4_0|q8_0|q4_k|q6_k]
set -eu
K=$PWD/core/backend/cuda/kernels
E=$(cd "$(dirname "$0")" && pwd)
S=$E/../2026-12-01-cudaexact/emu
W=$(mktemp -d)
cp "$S"/shim.h "$S"/emu_launch.h "$E"/../2026-12-06-s15-emu/shim_dec.h "$E"/sw_main.cpp "$W"/
cd "$W"
cat >> shim_dec.h <<'H'
// Since session 19 (the split mat-vecs).
template <class T> T __ldg(const T* p) { return *p; }
inline uint32_t __funnelshift_r(uint32_t lo, uint32_t hi, int sh) { return (uint32_t)((((uint64_t)hi << 32) | lo) >> (sh & 31)); }
H
sed 's/#include <cuda_fp16.h>/#include "shim.h"\n#include "shim_dec.h"/; s|asm volatile("// minfer-pdl-wait" ::: "memory")|(void)0|; s|asm volatile("// minfer-pdl-launch" ::: "memory")|(void)0|' "$K/common.cuh" > common.cuh
python3 - "$K/decode.cu" <<'PY'
import sys, re
s = open(sys.argv[1]).read().replace('#include "common.cuh"', '')
# cp.async as a plain copy (the waits then have nothing to wait for)
s = re.sub(r'__device__ __forceinline__ void cp_async16\(uint8_t\* s, const uint8_t\* g\) \{.*?\n\}',
           '__device__ __forceinline__ void cp_async16(uint8_t* s, const uint8_t* g) { memcpy(s, g, 16); }', s, flags=re.S)
s = re.sub(r'__device__ __forceinline__ void prefetch_l2\(const void\* p\) \{.*?\}\n', '__device__ __forceinline__ void prefetch_l2(const void* p) {}\n', s)
s = s.replace('asm volatile("cp.async.wait_all;\\n" ::: "memory");', '')
s = s.replace('asm volatile("cp.async.commit_group;\\n" ::: "memory");', '')
s = s.replace('asm volatile("cp.async.wait_group %0;\\n" ::"n"(N) : "memory");', '')
s = re.sub(r'extern __shared__ (?:__align__\(\d+\) )?(\w+) (\w+)\[\];', r'\1* \2 = (\1*)g_dyn;', s)
s = re.sub(r'__shared__ __align__\((\d+)\)', r'alignas(\1) static', s)
s = s.replace('extern "C" ', '')
assert 'asm volatile("cp.async' not in s
open('decode.inc', 'w').write(s)
PY
F="-std=c++20 -O1 -ffp-contract=off -fno-strict-aliasing -pthread -w"
g++ $F -o sw sw_main.cpp
rc=0
./sw "$@" || rc=$?
rm -rf "$W"
exit $rc
