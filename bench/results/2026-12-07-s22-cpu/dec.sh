#!/bin/sh
# Three rounds, per type, main's binary (old, 68e324a) and h53's (new)
# alternating: minfer bench -p 1 -n 64 -t 2 --json, raw JSON in $D (dec/).
# Other sessions share the VM: each run waits (up to a minute) for the
# CPU pressure's 10 s average (/proc/pressure/cpu) to fall under 5 %.
# CGO_ENABLED=0 go build -tags nogui -o /tmp/h53/minfer-old . (at 68e324a)
# CGO_ENABLED=0 go build -tags nogui -o /tmp/h53/minfer-new . (at h53)
R=bench/results/2026-12-07-s22-cpu
D=$R/${D:-dec}
mkdir -p $D
quiet() {
  for i in $(seq 30); do
    awk '/^some/ {split($2, a, "="); exit !(a[2] < 5)}' /proc/pressure/cpu && return
    sleep 2
  done
}
for r in 1 2 3; do
  for t in q4_0 q8_0 q4_k_m; do
    for b in old new; do
      quiet
      echo "$(date -u +%T) r$r $t $b $(head -1 /proc/pressure/cpu)" >> $D/log.txt
      /tmp/h53/minfer-$b bench -m /tmp/h53/1b-$t.gguf -p 1 -n 64 -t 2 --json > $D/r$r-$t-$b.json 2>> $D/log.txt
    done
  done
done
