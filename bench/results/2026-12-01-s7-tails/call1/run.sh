#!/bin/bash
# Session 7, tails call 1 (issue 11): norm_one and rope_store_one after plain mat-vecs (the new default)
# against the mat-vec tails (MINFER_CUDA_DECODE= : everything on, the tails too). CUDA op tests, GPU model
# tests over testdata, decode A/B alternating (8B-shaped Q4_K 4 blocks, 1.1B Q4_0), ncu per-kernel durations.
R=$PWD; D=$R/.device/s7b; L=/tmp/L; mkdir -p $L
(cd $D && gunzip -f *.gz; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
timeout 40 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf 2>&1 | tail -1 | tee -a $S
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 60 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "decode |rc=|rror" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  for dec in mvnorm,mvrope none; do
    bn MINFER_CUDA_DECODE=$dec $D/minfer bench -m /tmp/8b4.gguf -p 16 -n 256 -r 3 --gpu-layers 5
    bn MINFER_CUDA_DECODE=$dec $D/minfer bench -m /tmp/1b.gguf -p 16 -n 256 -r 3 --gpu-layers 23
  done
done
for dec in mvnorm,mvrope none; do
  echo "## ncu durations MINFER_CUDA_DECODE=$dec 8b4 (graphs off, cache-control none)" | tee -a $S
  MINFER_CUDA_DECODE=$dec MINFER_CUDA_GRAPHS=0 timeout 120 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 600 --launch-count 160 $D/minfer bench -m /tmp/8b4.gguf -p 16 -n 40 --gpu-layers 5 > $L/ncu-$dec.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  grep -E "^  [a-z_0-9]+|gpu__time_duration.sum" $L/ncu-$dec.txt | paste - - | awk '{printf "%s %s %s | n=%s | us min/max/avg %s %s %s\n",$1,$2,$3,$(NF-8),$(NF-2),$(NF-1),$NF}' | tee -a $S
done
(cd core/backend/cuda && timeout 250 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt) cases=$(grep -c 'logits differ' $L/core-gpu.txt) nonzero=$(grep -cE ': [1-9][0-9]* of [0-9]+ logits differ' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -20 | tee -a $S
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
