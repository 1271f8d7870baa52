#!/bin/sh
# decode fractions, alternating types: OUT/dec-TYPE-rN.json
OUT=${OUT:-dec}; BIN=${BIN:-/tmp/minfer-h52}; ROUNDS=${ROUNDS:-3}
mkdir -p $OUT
for r in $(seq 1 $ROUNDS); do
  for t in q4_0 q8_0 q4_k_m; do
    date -u +%T > $OUT/dec-$t-r$r.time
    $BIN bench -m /tmp/h/1b-$t.gguf -p 1 -n 64 -t 2 --json > $OUT/dec-$t-r$r.json 2> $OUT/dec-$t-r$r.err
  done
done
