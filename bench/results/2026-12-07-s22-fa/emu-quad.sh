#!/bin/bash
# Session 22: the exact flash kernels (fattn.cu) with the eight-threads-a-position scorer (QUAD in 92ab3c6, OCT since) on the host emulator of
# ../2026-12-01-cudaexact/emu (emu.sh attn), with six more four-row shapes inserted into its attn_main.cpp,
# bit for bit against attention_f16. MUTATE=1: a negative control — the four-row scorer's first cross-thread level
# pairs t3 with the partner at ql^2 instead of ql^4 (the same sums in another tree order): must differ.
# Usage (repository root): bash bench/results/2026-12-07-s22-fa/emu-quad.sh
set -eu
R=$PWD; S=$(cd "$(dirname "$0")" && pwd); T=$(mktemp -d)
mkdir -p $T/emu $T/root/core/backend/cuda
cp $R/bench/results/2026-12-01-cudaexact/emu/* $T/emu/
# the six more shapes, into session 16's driver
python3 - $T/emu/attn_main.cpp <<'PY2'
import sys
p = sys.argv[1]; s = open(p).read()
a = "        bad += run(96, 3, 1, 5, 40, 256, 0, 1, true, 0, false, keep, 15) != 0;\n    }"
assert s.count(a) == 1
s = s.replace(a, """        bad += run(96, 3, 1, 5, 40, 256, 0, 1, true, 0, false, keep, 15) != 0;
        // s22: the four-row kernels (QUAD: head size 64, and 128 on 512 threads) with soft-capping, holes,
        // one query head a KV head and eight, odd token counts, a cache of many tiles, and windows
        bad += run(64, 8, 2, 30, 21, 300, 50, 2, true, 0, false, keep, 16) != 0;
        bad += run(128, 8, 2, 30, 21, 300, 30, 3, true, 0, true, keep, 17) != 0;
        bad += run(64, 4, 4, 600, 7, 700, 0, 2, false, 0, false, keep, 18) != 0;
        bad += run(128, 16, 2, 600, 5, 700, 20, 1, true, 0, true, keep, 19) != 0;
        bad += run(128, 8, 8, 3, 13, 64, 0, 4, false, 0, true, keep, 20) != 0;
        bad += run(64, 16, 2, 100, 9, 170, 0, 1, true, 40, false, keep, 21) != 0;
    }""")
open(p, "w").write(s)
PY2
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
