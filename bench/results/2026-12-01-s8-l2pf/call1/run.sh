#!/bin/bash
# Session 8, L2 prefetch call 1 (issue 11): the decode step forks a side stream at each one-token rope
# and prefetches the next mat-vecs' weights into the L2 (MINFER_CUDA_L2PF). New op tests, then decode A/B
# alternating on the full 8B-shaped Q4_K model and the 1.1B Q4_0 model (off / default / variants), then
# ncu per-kernel durations of an 8B-shaped prefill (4 blocks, p512) for the prefill profile.
R=$PWD; D=$R/.device/s8a; L=/tmp/L; mkdir -p $L
(cd $D && gunzip -f *.gz; chmod +x cuda.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(cd core/backend/cuda && timeout 100 $D/cuda.test -test.v -test.count=1 -test.run 'Prefetch|L2|TestMatVecRopeTail|TestMatVecPiped' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:|FAIL" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "--- (PASS|FAIL): Test(L2|Prefetch|Parse)" $L/cuda-op.txt | head -20 | tee -a $S
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
timeout 40 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf 2>&1 | tail -1 | tee -a $S
t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > /dev/null 2>&1; echo "synth 8b rc=$? $((SECONDS-t0))s" | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 80 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "prefill|decode |rc=|rror" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  for pf in off "" 40 "25,8" "25,33,last" "25,132"; do
    bn MINFER_CUDA_L2PF=$pf $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 33
  done
done
for round in 1 2; do
  for pf in off ""; do
    bn MINFER_CUDA_L2PF=$pf $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
  done
done
nc() { tag=$1; shift; echo "## ncu durations $tag: $*" | tee -a $S; MINFER_CUDA_GRAPHS=0 timeout 150 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --print-summary per-kernel "$@" > $L/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  grep -E "^  [a-z_0-9]+|gpu__time_duration.sum" $L/ncu-$tag.txt | paste - - | awk '{printf "%s %s %s | n=%s | us min/max/avg %s %s %s\n",$1,$2,$3,$(NF-8),$(NF-2),$(NF-1),$NF}' | tee -a $S; }
nc prefill --launch-count 150 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 1 -r 1 --gpu-layers 5
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
