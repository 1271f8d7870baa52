#!/bin/bash
# Device call 4: op + model tests of the branch merged with main.
R=$PWD
D=$R/.device/cuda2
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x core.test cuda.test)
export MINFER_TESTDATA=$D/td
(cd core/backend/cuda && timeout 120 $D/cuda.test -test.v -test.count=1 -test.skip 'TestPTXMatchesSources|NoDriver' > $OUT/cuda-op-test.txt 2>&1; echo "cuda.test rc=$?")
grep -cE -- "--- PASS" $OUT/cuda-op-test.txt; grep -E -- "--- FAIL|panic" $OUT/cuda-op-test.txt | head -30
(cd core && timeout 150 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $OUT/core-gpu-test.txt 2>&1; echo "core.test rc=$?")
grep -cE -- "--- PASS" $OUT/core-gpu-test.txt; grep -E -- "--- FAIL|panic|graph runs" $OUT/core-gpu-test.txt | head -30
