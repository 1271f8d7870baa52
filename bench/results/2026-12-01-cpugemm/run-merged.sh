#!/bin/bash
# After merging main (5dd9246: main's AVX2 float ops and attention with
# this branch's kernels): minfer-merged against minfer-head (3afa4cf),
# alternating, as run.sh.
R=bench/results/2026-12-01-cpugemm
for round in 1 2 3; do
  for t in Q4_0 Q8_0 Q4_K; do
    for b in head merged; do
      echo "== $b $t round $round $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log-merged.txt
      bench/tmp/minfer-$b bench -m bench/tmp/1b-$t.gguf -p 128 -n 64 -t 2 -r 3 --json > $R/m-$b-$t-$round.json 2>>$R/log-merged.txt
    done
  done
done
echo "== done $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log-merged.txt
