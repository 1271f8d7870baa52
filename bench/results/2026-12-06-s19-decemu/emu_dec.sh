#!/bin/bash
# Host emulation of session 15's one-token decode kernels (decode.cu), with
# session 1's shim (../2026-12-01-cudaexact/emu/shim.h: a block's threads as
# std::threads with barriers, shuffles through per-warp buffers, float
# intrinsics as IEEE float ops), cp.async as plain copies and the PDL marks
# as nothing, compared bit for bit against the kernels the device tests
# hold to the CPU:
#   attn_x_one_rope_64 (session 14) vs rope_store_one + attn_x_one_64
# (and, in d03d0bd, the streaming mvr_* and swiglu-fused mvs_*_sw mat-vecs,
# reverted since).
# Session 19: attn_x_one_rope_* reads the mask, computes n_kv, copies the other positions' V rows and
# prefetches their K rows before its PDL wait (prefetch_l2 as nothing here); this folder's dec_main.cpp (session 15's, both forms) and session 15's
# shim_dec.h, with the shims decode.cu needs since session 19.
# Usage (from the repository root): bench/results/2026-12-06-s19-decemu/emu_dec.sh
set -eu
K=$PWD/core/backend/cuda/kernels
E=$(cd "$(dirname "$0")" && pwd)/../2026-12-06-s15-emu
S=$E/../2026-12-01-cudaexact/emu
W=$(mktemp -d)
cp "$S"/shim.h "$S"/emu_launch.h "$E"/../2026-12-06-s19-decemu/dec_main.cpp "$E"/shim_dec.h "$W"/
cd "$W"
cat >> shim_dec.h <<'H'
// Since session 19 (the split mat-vecs in decode.cu).
template <class T> T __ldg(const T* p) { return *p; }
inline uint32_t __funnelshift_r(uint32_t lo, uint32_t hi, int sh) { return (uint32_t)((((uint64_t)hi << 32) | lo) >> (sh & 31)); }
H
sed 's/#include <cuda_fp16.h>/#include "shim.h"\n#include "shim_dec.h"/; s|asm volatile("// minfer-pdl-wait" ::: "memory")|(void)0|; s|asm volatile("// minfer-pdl-launch" ::: "memory")|(void)0|' "$K/common.cuh" > common.cuh
sed 's/#include "common.cuh"//' "$K/quant.cu" > quant.inc
python3 - "$K/decode.cu" <<'PY'
import sys, re
s = open(sys.argv[1]).read().replace('#include "common.cuh"', '')
# cp.async as a plain copy (the waits then have nothing to wait for)
s = re.sub(r'__device__ __forceinline__ void cp_async16\(uint8_t\* s, const uint8_t\* g\) \{.*?\n\}',
           '__device__ __forceinline__ void cp_async16(uint8_t* s, const uint8_t* g) { memcpy(s, g, 16); }', s, flags=re.S)
s = s.replace('asm volatile("cp.async.wait_all;\\n" ::: "memory");', '')
s = s.replace('asm volatile("cp.async.commit_group;\\n" ::: "memory");', '')
s = s.replace('asm volatile("cp.async.wait_group %0;\\n" ::"n"(N) : "memory");', '')
s = re.sub(r'extern __shared__ (?:__align__\(\d+\) )?(\w+) (\w+)\[\];', r'\1* \2 = (\1*)g_dyn;', s)
s = re.sub(r'__shared__ __align__\((\d+)\)', r'alignas(\1) static', s)
s = re.sub(r'__device__ __forceinline__ void prefetch_l2\(const void\* p\) \{.*?\}\n', '__device__ __forceinline__ void prefetch_l2(const void* p) {}\n', s)
s = s.replace('extern "C" ', '')
open('decode.inc', 'w').write(s)
PY
F="-std=c++20 -O1 -ffp-contract=off -fno-strict-aliasing -pthread -w"
g++ $F -o dec dec_main.cpp 2>&1 | grep -E "error" | head -30
./dec
rc=$?
rm -rf "$W"
exit $rc
