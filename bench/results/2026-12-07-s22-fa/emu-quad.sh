#!/bin/bash
# Session 22: the exact flash kernels (fattn.cu) with the eight-threads-a-position scorer (QUAD in 92ab3c6, OCT since) on the host emulator of
# ../2026-12-01-cudaexact/emu (emu.sh attn), with this directory's attn_main.cpp (six more four-row shapes),
# bit for bit against attention_f16. MUTATE=1: a negative control — the four-row scorer's first cross-thread level
# pairs t3 with the partner at ql^2 instead of ql^4 (the same sums in another tree order): must differ.
# Usage (repository root): bash bench/results/2026-12-07-s22-fa/emu-quad.sh
set -eu
R=$PWD; S=$(cd "$(dirname "$0")" && pwd); T=$(mktemp -d)
mkdir -p $T/emu $T/root/core/backend/cuda
cp $R/bench/results/2026-12-01-cudaexact/emu/* $T/emu/; cp $S/attn_main.cpp $T/emu/
cp -r $R/core/backend/cuda/kernels $T/root/core/backend/cuda/
if [ "${MUTATE:-0}" = 1 ]; then
  python3 - $T/root/core/backend/cuda/kernels/fattn.cu <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
a = "__shfl_xor_sync(0xffffffffu, b ? t3[k] : t3[R - 2 + k], 4)"
assert s.count(a) == 1
open(p, 'w').write(s.replace(a, "__shfl_xor_sync(0xffffffffu, b ? t3[k] : t3[R - 2 + k], 2)"))
PY
fi
cd $T/root && bash $T/emu/emu.sh attn; rc=$?
rm -rf $T; exit $rc
