#!/bin/bash
# Session 7, pipelined mat-vec call 1 (issue 11): mvp_q4_k_1/mvp_q6_k_1 for long rows (the 8B down
# projection), the split attention's loads in flight together, norm_one's warp reduction, get_rows in blocks
# of 1024. CUDA op tests, GPU model tests, ncu per-kernel durations (8B-shaped, p512), decode A/B
# (MINFER_CUDA_DECODE=mvnorm,mvrope,mvpipe: the pipelined mat-vec off) alternating.
R=$PWD; D=$R/.device/s7d; L=/tmp/L; mkdir -p $L
(cd $D && gunzip -f *.gz; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(cd core/backend/cuda && timeout 250 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "--- (PASS|FAIL): TestMatVecPiped/" $L/cuda-op.txt | head -20 | tee -a $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt) cases=$(grep -c 'logits differ' $L/core-gpu.txt) nonzero=$(grep -cE ': [1-9][0-9]* of [0-9]+ logits differ' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -20 | tee -a $S
timeout 40 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf 2>&1 | tail -1 | tee -a $S
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
nc() { tag=$1; shift; echo "## ncu durations $tag: $*" | tee -a $S; MINFER_CUDA_GRAPHS=0 timeout 150 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --print-summary per-kernel "$@" > $L/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  grep -E "^  [a-z_0-9]+|gpu__time_duration.sum" $L/ncu-$tag.txt | paste - - | awk '{printf "%s %s %s | n=%s | us min/max/avg %s %s %s\n",$1,$2,$3,$(NF-8),$(NF-2),$(NF-1),$NF}' | tee -a $S; }
nc p512 --launch-skip 1200 --launch-count 200 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 40 --gpu-layers 5
bn() { echo "## $*" | tee -a $S; timeout 80 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "decode |rc=|rror" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  for dec in mvnorm,mvrope mvnorm,mvrope,mvpipe; do
    bn MINFER_CUDA_DECODE=$dec $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 128 -r 3 --gpu-layers 5
  done
done
bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
