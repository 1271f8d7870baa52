#!/bin/bash
# After the expf16 twin: minfer-final2 (this branch's head), two rounds
# alternating the three files, as run-final.sh.
R=bench/results/2026-12-01-cpu-simd
for round in 1 2; do
  for t in Q4_0 Q8_0 Q4_K; do
    echo "== final2 $t round $round $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log-final2.txt
    bench/tmp/minfer-final2 bench -m bench/tmp/1b-$t.gguf -p 128 -n 64 -t 2 -r 3 --json > $R/final2-$t-$round.json 2>>$R/log-final2.txt
  done
done
echo "== done $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log-final2.txt
