#!/bin/bash
# Session 20 call 3 (issue 11): the fused swiglu test with call 2's test fix (its Q8_0 case in blocks of three warps
# expected the fused launch, which an odd slot count never takes; now expected unfused, and a Q8_0 case in blocks of
# four fused), once (Q8_0 and Q4_0 cases: the device time left is ~300 s), and the early-read rope+attention test. Carry .device/s20c (cuda.test only).
D=$PWD/.device/s20c; L=$OUT; S=$L/summary.txt
(cd $D && (xz -d -f cuda.test.xz 2>/dev/null || python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('cuda.test.xz'), open('cuda.test','wb'))") && chmod +x cuda.test)
echo "# built from $(cat $D/BUILT_FROM); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
cd core/backend/cuda && timeout 150 $D/cuda.test -test.v -test.count=1 -test.run 'TestSwigluMatVec|TestRopeStoreAttentionEarly/Q8_0|Q4_0|hd' > $L/cuda-sw.txt 2>&1
echo "rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-sw.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-sw.txt)" | tee -a $S
grep -E -- "--- FAIL|panic:|want fused" $L/cuda-sw.txt | head -20 | tee -a $S
grep -E -- "--- PASS: TestSwigluMatVec/Q8_0" $L/cuda-sw.txt | tee -a $S
grep -E -- "^--- (PASS|FAIL)" $L/cuda-sw.txt | tee -a $S
