#!/bin/bash
# Session 8, call 2 (issue 11): all CUDA op tests; GPU model tests over testdata (models/, small/, arch/;
# the synth model left out: the carried tree would pass 64 MiB); the L2 prefetch with its plan fixed (call 1's plan stopped at k's
# rope: nothing was fetched) and the flash attention keeping its scores between passes (+ attn_used over
# many blocks), A/B alternating: A = MINFER_CUDA_L2PF=off MINFER_CUDA_FATTN=nokeep, B = defaults,
# C = MINFER_CUDA_L2PF=off; 8B Q4_K all blocks, 1.1B Q4_0, 8B 16 of 32; ncu prefill per kernel and the
# sections of one mmqp_q4_k launch. Logs: $OUT.
R=$PWD; D=$R/.device/s8b; L=/tmp/L; mkdir -p $L
(cd $D && gunzip -f *.gz; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(cd core/backend/cuda && timeout 200 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "--- (PASS|FAIL): Test(L2|Prefetch|Parse|FlashAttention)" $L/cuda-op.txt | head -30 | tee -a $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt) cases=$(grep -c 'logits differ' $L/core-gpu.txt) nonzero=$(grep -cE ': [1-9][0-9]* of [0-9]+ logits differ' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -25 | tee -a $S
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
timeout 40 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf 2>&1 | tail -1 | tee -a $S
t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > /dev/null 2>&1; echo "synth 8b rc=$? $((SECONDS-t0))s" | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "prefill|decode|device|rc=|rror" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn MINFER_CUDA_L2PF=off MINFER_CUDA_FATTN=nokeep $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 33
  bn X=defaults $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 33
  bn MINFER_CUDA_L2PF=off $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 33
done
for round in 1 2; do
  bn MINFER_CUDA_L2PF=off MINFER_CUDA_FATTN=nokeep $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
  bn X=defaults $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
  bn MINFER_CUDA_L2PF=off $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
done
bn X=defaults $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 1 --gpu-layers 16
nc() { tag=$1; shift; echo "## ncu durations $tag: $*" | tee -a $S; MINFER_CUDA_GRAPHS=0 timeout 150 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --print-summary per-kernel "$@" > $L/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  grep -A6 "^  [a-z]" $L/ncu-$tag.txt | grep -E "^  [a-z]|duration" | paste - - | awk '{print $1, $2, $3, "|", $(NF-4), "min/max/avg", $(NF-2), $(NF-1), $NF}' | tee -a $S; }
nc prefill --launch-count 150 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 1 -r 1 --gpu-layers 5
echo "## ncu sections of one mmqp_q4_k launch (8b4 prefill, gate/up)" | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 120 ncu --clock-control none -k regex:mmqp_q4_k --launch-skip 2 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 1 -r 1 --gpu-layers 5 > $L/ncu-mmqp.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
grep -E "mmqp_q4_k|Throughput|Occupancy|Registers|Shared Memory Config|Block Limit|Stall|Issued Ipc|Warp Cycles|Eligible|Executed Ipc" $L/ncu-mmqp.txt | head -40 | tee -a $S
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
