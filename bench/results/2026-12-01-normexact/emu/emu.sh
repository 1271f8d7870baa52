#!/bin/bash
# Host emulation of the rms_norm means of the CUDA kernels (helper
# normexact): rms_norm (ops.cu), norm_quant, mvn_prologue (mvs_*_n) and
# norm_tail (mvs_*_tn) of decode.cu, their own source through
# bench/results/2026-12-01-cudaexact/emu/shim.h, against the CPU's serial
# chain, on random rows and on rows whose mean is a float32 tie. Usage
# (from the repository root): bench/results/2026-12-01-normexact/emu/emu.sh
# [kernel dir] (default core/backend/cuda/kernels; give a checkout of the
# old kernels to see them differ).
set -eu
K=$(cd "${1:-core/backend/cuda/kernels}" && pwd)
E=$(cd "$(dirname "$0")" && pwd)
X=$PWD/bench/results/2026-12-01-cudaexact/emu
W=$(mktemp -d)
cp "$X"/shim.h "$E"/norm_main.cpp "$W"/
cd "$W"
cat >>shim.h <<'H'
#define __noinline__ __attribute__((noinline))
inline double __dadd_rn(double a, double b) { volatile double r = a + b; return r; }
inline double __dsub_rn(double a, double b) { volatile double r = a - b; return r; }
inline double __dmul_rn(double a, double b) { volatile double r = a * b; return r; }
H
sed 's/#include <cuda_fp16.h>/#include "shim.h"/' "$K/common.cuh" > common.cuh
python3 - "$K/decode.cu" "$K/ops.cu" <<'PY'
import sys
s = open(sys.argv[1]).read()
o = open(sys.argv[2]).read()
def cut(t, a, b): return t[t.index(a):t.index(b)]
out = cut(s, '// ------------------------------------------------- activation quantizers', '// swiglu_quant:')
out += cut(s, '// ------------------------------------- norm + staged mat-vec (one token)', '#define MVSN(name)')
out += cut(s, '// mvt_last: every thread', '// The mvs_*_m body')
out += cut(o, '// rms_norm into out', '// out = x op y')
out = out.replace('extern "C" __global__ void __launch_bounds__(1024) norm_quant', 'void norm_quant')
out = out.replace('extern "C" __global__ void rms_norm', 'void rms_norm')
open('norm.inc', 'w').write(out)
PY
g++ -std=c++20 -O1 -ffp-contract=off -fno-strict-aliasing -pthread -w -o norm norm_main.cpp
set +e
./norm
rc=$?
rm -rf "$W"
exit $rc
