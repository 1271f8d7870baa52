#!/bin/bash
# Alternating runs of the branch point (minfer-base: 3ee959b, the cpu-simd
# kernels) and this branch's head (minfer-head), pp128 / tg64, 2 threads,
# 3 repetitions after a warm-up, for the three synth files, round after
# round until STOP (HH:MM, UTC); each line of log.txt records the load
# average before the run (the machine is shared).
# Binaries: CGO_ENABLED=0 go build -tags nogui -o bench/tmp/minfer-X .
# Models:   minfer synth --preset 1b --type T -o bench/tmp/1b-T.gguf
R=bench/results/2026-12-01-cpugemm
STOP=${STOP:-05:00}
round=${ROUND:-1}
while [[ "$(date +%H:%M)" < "$STOP" ]]; do
  for t in Q4_0 Q8_0 Q4_K; do
    for b in base head; do
      echo "== $b $t round $round $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log.txt
      bench/tmp/minfer-$b bench -m bench/tmp/1b-$t.gguf -p 128 -n 64 -t 2 -r 3 --json > $R/$b-$t-$round.json 2>>$R/log.txt
    done
  done
  round=$((round+1))
done
echo "== done $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log.txt
