#!/bin/sh
# after both changes (h52 261a44f): old (main fa7e8c0) and new binaries alternating on Q4_0 and Q4_K_M, then Q8_0 (new)
OUT=${OUT:-dec4}; ROUNDS=${ROUNDS:-3}
mkdir -p $OUT
for r in $(seq 1 $ROUNDS); do
  for run in "q4_0 old /tmp/minfer-h52" "q4_0 new /tmp/minfer-h52new" "q4_k_m old /tmp/minfer-h52" "q4_k_m new /tmp/minfer-h52new" "q8_0 new /tmp/minfer-h52new"; do
    set -- $run
    date -u +%T > $OUT/dec-$1_$2-r$r.time
    $3 bench -m /tmp/h/1b-$1.gguf -p 1 -n 64 -t 2 --json > $OUT/dec-$1_$2-r$r.json 2> $OUT/dec-$1_$2-r$r.err
  done
done
