#!/bin/bash
cd "$(dirname "$0")"
for f in *.gz; do gunzip -f "$f"; done
chmod +x *.test
export MINFER_TESTDATA=$PWD/td
./cuda.test -test.v -test.count=1 -test.skip 'PTX|NoDriver' > $OUT/cuda-test.txt 2>&1; echo "cuda.test rc=$?"
grep -E "^\s*--- FAIL|panic" $OUT/cuda-test.txt | head -20
./core.test -test.v -test.count=1 -test.run 'GPU' > $OUT/core-gpu-test.txt 2>&1; echo "core.test rc=$?"
grep -E "^\s*--- FAIL|panic|graph runs|^ok|^PASS" $OUT/core-gpu-test.txt | head -30
grep -E " > " $OUT/core-gpu-test.txt | head -20
