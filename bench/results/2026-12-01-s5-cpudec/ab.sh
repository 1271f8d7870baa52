#!/bin/bash
# usage: ab.sh DIR OLD NEW ROUNDS TYPES...
cd /tmp/cd
D=$1; A=$2; B=$3; R=$4; shift 4
for r in $(seq 1 $R); do
  for T in "$@"; do
    if [ $((r % 2)) = 1 ]; then order="$A $B"; else order="$B $A"; fi
    for bin in $order; do
      l=$(cut -d' ' -f1 /proc/loadavg)
      ./$bin bench -m 1b-$T.gguf -p 128 -n 64 -t 2 -r 3 --json > $D/$bin-$T-$r.json
      python3 -c "
import json;d=json.load(open('$D/$bin-$T-$r.json'));print('$bin $T r$r $(date -u +%T) load $l', d['kernel_level'], round(d['prefill_tok_s'],1), round(d['decode_tok_s'],2), round(d['decode_fraction_of_memory_bandwidth'],3), round(d['measured_memory_gb_s'],1))" >> $D/summary.txt
    done
  done
done
