#!/bin/sh
# Alternating micro A/B: base.test (main 79a0916 + the benchmark file) vs new.test (branch), 4 rounds.
OUT=$1
mkdir -p $OUT
for r in 1 2 3 4; do
  if [ $((r % 2)) = 1 ]; then order="base new"; else order="new base"; fi
  for who in $order; do
    /tmp/q4kgen/$who.test -test.run XXX -test.bench 'FourRowQ4_K/avx512' -test.count 2 > $OUT/r$r-$who.txt 2>&1
  done
done
