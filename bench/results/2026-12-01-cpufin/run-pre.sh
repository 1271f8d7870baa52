#!/bin/bash
# minfer-fbase (ca609ef) against minfer-head (b219210: four decode chunks
# per thread) and two prefill chunk sizes on top of head: minfer-p32 and
# minfer-p64 (grain 32 / 64 rows instead of 16 for tokens > 1),
# alternating; each run starts only once the 1-minute load is <= 2.5.
R=bench/results/2026-12-01-cpufin
waitload() { while awk '{exit !($1>2.5)}' /proc/loadavg; do sleep 5; done; }
for round in $(seq 1 ${ROUNDS:-3}); do
  for t in Q8_0 Q4_0 Q4_K; do
    for b in fbase head p32 p64; do
      waitload
      echo "== $b $t round $round $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log-pre.txt
      bench/tmp/minfer-$b bench -m bench/tmp/1b-$t.gguf -p 128 -n 64 -t 2 -r 3 --json > $R/pre-$b-$t-$round.json 2>>$R/log-pre.txt
    done
  done
done
echo "== done $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log-pre.txt
