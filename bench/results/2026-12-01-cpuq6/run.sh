#!/bin/bash
# Alternating runs of main at this branch's last merge (minfer-q6base:
# cce3d6f) and this branch (minfer-q6head), pp128 / tg64, 2 threads, 3
# repetitions after a warm-up, for the three synth files, round after
# round until ROUNDS are done or STOP (HH:MM, UTC). Each run starts only
# when the 1-minute load average is <= 2.5 (the machine is shared); the
# load at the start is in log.txt. Which binary goes first alternates by
# round.
# Binaries: CGO_ENABLED=0 go build -tags nogui -o bench/tmp/minfer-X .
# Models:   minfer synth --preset 1b --type T -o bench/tmp/1b-T.gguf
#           (T = Q4_K_M, Q4_K, Q4_0; synth of main f8b70cf or later)
R=bench/results/2026-12-01-cpuq6
STOP=${STOP:-07:30}
ROUNDS=${ROUNDS:-4}
round=${ROUND:-1}
waitload() { while awk '{exit !($1 > 2.5)}' /proc/loadavg; do sleep 10; done; }
while [[ $round -le $ROUNDS && "$(date +%H:%M)" < "$STOP" ]]; do
  order="q6base q6head"
  if (( round % 2 == 0 )); then order="q6head q6base"; fi
  for t in Q4_K_M Q4_K Q4_0; do
    for b in $order; do
      waitload
      echo "== $b $t round $round $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log.txt
      bench/tmp/minfer-$b bench -m bench/tmp/1b-$t.gguf -p 128 -n 64 -t 2 -r 3 --json > $R/$b-$t-$round.json 2>>$R/log.txt
    done
  done
  round=$((round+1))
done
echo "== done $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log.txt
