#!/bin/bash
# Final runs: this branch's head (minfer-final, CGO_ENABLED=0), two rounds
# alternating the three files, 2 threads, 3 timed runs after a warm-up.
R=bench/results/2026-12-01-cpu-simd
for round in 1 2; do
  for t in Q4_0 Q8_0 Q4_K; do
    echo "== final $t round $round $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log-final.txt
    bench/tmp/minfer-final bench -m bench/tmp/1b-$t.gguf -p 128 -n 64 -t 2 -r 3 --json > $R/final-$t-$round.json 2>>$R/log-final.txt
  done
done
echo "== done $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log-final.txt
