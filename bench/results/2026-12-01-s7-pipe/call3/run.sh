#!/bin/bash
# Session 7, pipelined mat-vec call 3 (issue 11): mvp_* for every one-token Q4_K/Q6_K mat-vec whose warps
# get several rows (pipedRowsPerWarp) or long rows, one weight or three (mvp_*_m). CUDA op tests; ncu
# per-kernel durations (8B-shaped, p512); decode A/B alternating (MINFER_CUDA_DECODE=mvnorm,mvrope,mvpipe:
# the pipelined mat-vecs off), 8B-shaped 4 blocks and 1.1B Q4_0 (Q6_K output head).
R=$PWD; D=$R/.device/s7f; L=/tmp/L; mkdir -p $L
(cd $D && gunzip -f *.gz; chmod +x cuda.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(cd core/backend/cuda && timeout 200 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "--- (PASS|FAIL): TestMatVecPiped/" $L/cuda-op.txt | head -20 | tee -a $S
timeout 40 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf 2>&1 | tail -1 | tee -a $S
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
nc() { tag=$1; shift; echo "## ncu durations $tag: $*" | tee -a $S; MINFER_CUDA_GRAPHS=0 timeout 150 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --print-summary per-kernel "$@" > $L/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  grep -E "^  [a-z_0-9]+|gpu__time_duration.sum" $L/ncu-$tag.txt | paste - - | awk '{printf "%s %s %s | n=%s | us min/max/avg %s %s %s\n",$1,$2,$3,$(NF-8),$(NF-2),$(NF-1),$NF}' | tee -a $S; }
nc p512 --launch-skip 1200 --launch-count 200 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 40 --gpu-layers 5
bn() { echo "## $*" | tee -a $S; timeout 80 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "decode |rc=|rror" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  for dec in mvnorm,mvrope mvnorm,mvrope,mvpipe; do
    bn MINFER_CUDA_DECODE=$dec $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 128 -r 3 --gpu-layers 5
    bn MINFER_CUDA_DECODE=$dec $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
  done
done
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
