#!/bin/bash
# After the review merges: the GPU op tests and GPU model tests, bit-exact against the CPU.
D=$PWD/.device/v
(cd $D && gunzip -f *.gz && chmod +x *.test)
(cd core/backend/cuda && timeout 70 $D/cuda.test -test.count=1 -test.v > $OUT/cuda-op-test.txt 2>&1; echo "cuda.test rc=$?")
grep -c -- "--- PASS" $OUT/cuda-op-test.txt; grep -E -- "--- FAIL|panic" $OUT/cuda-op-test.txt | head -10
(cd core && timeout 70 $D/core.test -test.count=1 -test.v -test.run 'TestGPU' > $OUT/core-gpu-test.txt 2>&1; echo "core.test rc=$?")
grep -E -- "^--- |^(ok|PASS|FAIL)" $OUT/core-gpu-test.txt | head -10
