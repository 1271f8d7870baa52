#!/bin/bash
# Decode chunk size: minfer-fbase (ca609ef, rows/(8n) per chunk) against
# minfer-g32 (rows/(16n)) and minfer-g64 (rows/(32n)), alternating; each run
# starts only once the 1-minute load is <= 2.5.
R=bench/results/2026-12-01-cpufin
waitload() { while awk '{exit !($1>2.5)}' /proc/loadavg; do sleep 5; done; }
for round in $(seq 1 ${ROUNDS:-4}); do
  for t in Q4_0 Q4_K; do
    for b in fbase g32 g64; do
      waitload
      echo "== $b $t round $round $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log-grain.txt
      bench/tmp/minfer-$b bench -m bench/tmp/1b-$t.gguf -p 128 -n 64 -t 2 -r 3 --json > $R/grain-$b-$t-$round.json 2>>$R/log-grain.txt
    done
  done
done
echo "== done $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log-grain.txt
