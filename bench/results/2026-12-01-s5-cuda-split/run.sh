#!/bin/bash
# Session 5, call 5 (issue 11): Q4_K / Q6_K staged mat-vec rows in two cp.async groups (the warp runs the
# first half's chain while the second half is in flight). Op tests and GPU model tests on the new
# kernels, then decode A/B against main 1fcf26b (minfer-old), alternating: 8B-shaped Q4_K 4 blocks,
# 1.1B Q4_0 (its Q6_K output head), then the full 8B Q4_K.
R=$PWD; D=$R/.device/s5g; L=/tmp/L; mkdir -p $L
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x cuda.test core.test minfer-new minfer-old)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core/backend/cuda && timeout 150 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
(cd core && MINFER_TESTDATA=$D/td timeout 150 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) cases=$(grep -c 'logits differ' $L/core-gpu.txt) nonzero=$(grep -cE ': [1-9][0-9]* of [0-9]+ logits differ' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -20 | tee -a $S
timeout 30 $D/minfer-new synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
timeout 40 $D/minfer-new synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf 2>&1 | tail -1 | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "prefill|decode  |rc=|rror" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do for v in new old; do
  bn $D/minfer-$v bench -m /tmp/8b4.gguf -p 16 -n 256 -r 3 --gpu-layers 5
  bn $D/minfer-$v bench -m /tmp/1b.gguf -p 16 -n 256 -r 3 --gpu-layers 23
done; done
t0=$SECONDS; timeout 200 $D/minfer-new synth --preset 8b --type Q4_K -o /tmp/8b.gguf > /dev/null 2>&1; echo "synth 8b rc=$? $((SECONDS-t0))s" | tee -a $S
for v in new old new old; do bn $D/minfer-$v bench -m /tmp/8b.gguf -p 512 -n 128 -r 1 --gpu-layers 33; done
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
