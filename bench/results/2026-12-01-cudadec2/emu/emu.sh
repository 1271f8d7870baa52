#!/bin/bash
# Host emulation of the mat-vec tails (helper cudadec2): the kernels' own
# source through bench/results/2026-12-01-cudaexact/emu/shim.h. Usage (from
# the repository root): bench/results/2026-12-01-cudadec2/emu/emu.sh
set -eu
K=$PWD/core/backend/cuda/kernels
E=$(cd "$(dirname "$0")" && pwd)
X=$PWD/bench/results/2026-12-01-cudaexact/emu
W=$(mktemp -d)
cp "$X"/shim.h "$E"/tail_main.cpp "$W"/
cd "$W"
sed 's/#include <cuda_fp16.h>/#include "shim.h"/' "$K/common.cuh" > common.cuh
python3 - "$K/decode.cu" <<'PY'
import sys
s = open(sys.argv[1]).read()
def cut(a, b): return s[s.index(a):s.index(b)]
out = cut('// ------------------------------------------------- activation quantizers', '// swiglu_quant:')
out += cut('// rope_pair: the rope of ops.cu', '// ----------------------------------------------------- decode attention')
out += cut('// mvt_last: every thread', '// The mvs_*_m body')
out = out.replace('extern "C" __global__ void __launch_bounds__(1024) norm_quant', 'void norm_quant')
out = out.replace('extern "C" __global__ void rope_pair', 'void rope_pair').replace('extern "C" __global__ void store_kv_pair', 'void store_kv_pair')
out = out.replace('extern __shared__ float cs[];', 'float* cs = (float*)g_dyn;')
open('tail.inc', 'w').write(out)
PY
g++ -std=c++20 -O1 -ffp-contract=off -fno-strict-aliasing -pthread -w -o tail tail_main.cpp
./tail
rc=$?
rm -rf "$W"
exit $rc
