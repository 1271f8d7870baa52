#!/bin/bash
# Host emulation of session 20's norm prologue of the staged mat-vecs
# (decode.cu's mvs_*_mn and mvs_*_wn: every block runs norm_one's chain
# and quantizes the row into its shared memory, then mvs_*_m's or
# mvs_*_w's body) with session 1's shim (../2026-12-01-cudaexact/emu/
# shim.h: a block's threads as std::threads with barriers, shuffles
# through per-warp buffers, float intrinsics as IEEE float ops with no
# contraction), session 15's additions (../2026-12-06-s15-emu/shim_dec.h:
# __threadfence, atomicAdd, __ldcg) and session 19's (__ldg,
# __funnelshift_r); cp.async as a plain copy, its commits and waits, the
# PDL marks and prefetch_l2 as nothing. rms_mean_serial counts its calls
# (g_serial: the driver shows the fallback ran). Compared bit for bit
# against norm_one then mvs_*_m / mvs_*_w (today's launches, which the
# device tests hold to the CPU).
# Usage (from the repository root):
#   bench/results/2026-12-07-s20-npemu/emu_np.sh [q4_0|q8_0|q4_k|q6_k]
# Mutation checks (each must print DIFFER lines and FAIL):
#   NP_MUTATE=serialglobal (the serial fallback reads the global row),
#   NP_MUTATE=q8lane (the q8_0 quantization takes a neighbour's value),
#   NP_NOWAIT=1 (the "out on x" cases without the counter, block 0 first).
set -eu
K=$PWD/core/backend/cuda/kernels
E=$(cd "$(dirname "$0")" && pwd)
S=$E/../2026-12-01-cudaexact/emu
W=$(mktemp -d)
cp "$S"/shim.h "$S"/emu_launch.h "$E"/../2026-12-06-s15-emu/shim_dec.h "$E"/np_main.cpp "$W"/
cd "$W"
cat >> shim_dec.h <<'H'
// Since session 19 (the split mat-vecs).
template <class T> T __ldg(const T* p) { return *p; }
inline uint32_t __funnelshift_r(uint32_t lo, uint32_t hi, int sh) { return (uint32_t)((((uint64_t)hi << 32) | lo) >> (sh & 31)); }
// Session 20: the serial fallback's calls.
std::atomic<int> g_serial{0};
H
sed 's/#include <cuda_fp16.h>/#include "shim.h"\n#include "shim_dec.h"/; s|asm volatile("// minfer-pdl-wait" ::: "memory")|(void)0|; s|asm volatile("// minfer-pdl-launch" ::: "memory")|(void)0|' "$K/common.cuh" > common.cuh
python3 - <<'PY'
s = open('common.cuh').read()
old = '__device__ __noinline__ float rms_mean_serial(const float* a, int n) {\n'
assert s.count(old) == 1
s = s.replace(old, old + '    g_serial++;\n')
open('common.cuh', 'w').write(s)
PY
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
import os
m = os.environ.get('NP_MUTATE', '')
if m == 'serialglobal': # the serial fallback over the global row (norm_one's), not the block's shared copy
    old = 'const float mean = rms_mean(t, n, vs);'
    assert s.count(old) == 1
    s = s.replace(old, 'const float mean = rms_mean(t, n, y ? sum : x);')
elif m == 'q8lane': # the prologue's q8_0 quantization taking lane^1's value
    old = 'if (qt == QT_Q8_0) q8_0_warp(o, xs + (i / 32) * 34, lane);'
    assert s.count(old) == 1
    s = s.replace(old, 'if (qt == QT_Q8_0) q8_0_warp(__shfl_xor_sync(0xffffffffu, o, 1), xs + (i / 32) * 34, lane);')
elif m:
    raise SystemExit('unknown NP_MUTATE ' + m)
open('decode.inc', 'w').write(s)
PY
F="-std=c++20 -O1 -ffp-contract=off -fno-strict-aliasing -pthread -w"
g++ $F -o np np_main.cpp
rc=0
./np "$@" || rc=$?
rm -rf "$W"
exit $rc
