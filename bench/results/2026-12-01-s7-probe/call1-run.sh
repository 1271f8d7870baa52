#!/bin/bash
# Session 7, call 1 (issue 11): where the small decode kernels' time goes. ncu sections (SpeedOfLight,
# Occupancy, LaunchStats, WarpStateStats, SchedulerStats, MemoryWorkloadAnalysis) of one decode token's
# mat-vec/attention kernels of the 8B-shaped Q4_K model (4 blocks), caches not flushed; per-kernel durations
# of main and of a probe build whose mat-vec kernels skip their one-block tails (wrong values, same loads);
# decode benches of both.
R=$PWD; D=$R/.device/s7a; L=/tmp/L; mkdir -p $L
(cd $D && gunzip -f *.gz; chmod +x minfer minfer-notail)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM); $(date -u); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)" | tee $S
timeout 40 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf 2>&1 | tail -1 | tee -a $S
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 60 "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "decode|rc=|rror" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  for b in minfer minfer-notail; do
    bn $D/$b bench -m /tmp/8b4.gguf -p 16 -n 256 -r 3 --gpu-layers 5
    bn $D/$b bench -m /tmp/1b.gguf -p 16 -n 256 -r 3 --gpu-layers 23
  done
done
for b in minfer minfer-notail; do
  echo "## ncu durations $b 8b4 (graphs off, cache-control none)" | tee -a $S
  MINFER_CUDA_GRAPHS=0 timeout 120 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 600 --launch-count 160 $D/$b bench -m /tmp/8b4.gguf -p 16 -n 40 --gpu-layers 5 > $L/ncu-$b.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  grep -E "^  [a-z_0-9]+|gpu__time_duration.sum" $L/ncu-$b.txt | paste - - | awk '{printf "%s %s %s | n=%s | us min/max/avg %s %s %s\n",$1,$2,$3,$(NF-8),$(NF-2),$(NF-1),$NF}' | tee -a $S
done
echo "## ncu sections main 8b4" | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 200 ncu --clock-control none --cache-control none --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis -k 'regex:mvs_q4_k|attn_x_one|swiglu' --launch-skip 120 --launch-count 12 $D/minfer bench -m /tmp/8b4.gguf -p 16 -n 40 --gpu-layers 5 > $OUT/ncu-sections-8b4.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
echo "## ncu sections main 1b" | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 150 ncu --clock-control none --cache-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis -k 'regex:mvs_q4_0|attn_x_one|swiglu' --launch-skip 200 --launch-count 8 $D/minfer bench -m /tmp/1b.gguf -p 16 -n 40 --gpu-layers 23 > $OUT/ncu-sections-1b.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
