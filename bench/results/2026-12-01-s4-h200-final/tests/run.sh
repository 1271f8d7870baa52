#!/bin/bash
# Session 4, final tests call (issue 11) on the merged main: CUDA op tests and GPU model tests over
# testdata (models/, small/, arch/) plus ../shared/testdata/synth's Q4_K_M model (carried: no room in
# the 64 MiB transfer for the other synth/ files). Logs: $OUT/summary.txt, $OUT/logs.tgz.
R=$PWD; D=$R/.device/s4t; L=/tmp/L; mkdir -p $L
(cd $D && for f in *.gz synth/*.gguf.gz; do gunzip -f "$f"; done; chmod +x cuda.test core.test)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
# (the 8B model is written by the bench call: no room for minfer in this call)
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done; ln -sfn $D/synth $D/td/synth
ls $D/td/synth | tee -a $S
(cd core/backend/cuda && timeout 200 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -25 | tee -a $S
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt) cases=$(grep -c 'logits differ' $L/core-gpu.txt) nonzero=$(grep -cE ': [1-9][0-9]* of [0-9]+ logits differ' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -25 | tee -a $S
grep -E "synth-llama-Q4_K_M" $L/core-gpu.txt | head -12 | tee -a $S

echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
