#!/bin/bash
# Alternating base/head runs of the same bench command; each run starts only
# once the 1-minute load is <= 2.5. Usage: run.sh PREFIX ROUNDS VARIANT...
# (binaries bench/tmp/minfer-VARIANT, models bench/tmp/1b-T.gguf).
# Writes PREFIX-VARIANT-T-ROUND.json and log-PREFIX.txt beside this script.
set -u
cd "$(dirname "$0")/../../.."
dir=bench/results/2026-12-01-cpuq8
prefix=$1; rounds=$2; shift 2
first=${FIRST:-1} # the first round's number (to add rounds to a set)
types=${TYPES:-"Q4_0 Q4_K Q8_0"}
for r in $(seq "$first" "$rounds"); do
  for T in $types; do
    for v in "$@"; do
      while :; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        awk -v l="$load" 'BEGIN{exit !(l <= 2.5)}' && break
        sleep 5
      done
      echo "$(date -u +%T) round $r $T $v load $load" >> $dir/log-$prefix.txt
      bench/tmp/minfer-$v bench -m bench/tmp/1b-$T.gguf -p 128 -n 64 -t 2 -r 3 --json > $dir/$prefix-$v-$T-$r.json 2>> $dir/log-$prefix.txt
    done
  done
done
