#!/bin/bash
# side by side: minfer-base, minfer-pf0, llama-bench; order rotates each round
cd /tmp/cd
D=sbs
for r in 1 2; do
  for T in Q4_0 Q8_0 Q4_K_M; do
    if [ $r = 1 ]; then order="minfer-base minfer-pf0 llama"; else order="llama minfer-pf0 minfer-base"; fi
    for bin in $order; do
      l=$(cut -d' ' -f1 /proc/loadavg); ts=$(date -u +%T)
      if [ $bin = llama ]; then
        /work/shared/tools/llama.cpp/llama-bench -m 1b-$T.gguf -t 2 -p 128 -n 64 -r 3 -o json > $D/llama-$T-$r.json 2>/dev/null
        python3 -c "
import json;d=json.load(open('$D/llama-$T-$r.json'));pp=[x for x in d if x['n_prompt']>0][0];tg=[x for x in d if x['n_gen']>0][0];print('llama $T r$r $ts load $l', round(pp['avg_ts'],1), round(tg['avg_ts'],2))" >> $D/summary.txt
      else
        ./$bin bench -m 1b-$T.gguf -p 128 -n 64 -t 2 -r 3 --json > $D/$bin-$T-$r.json
        python3 -c "
import json;d=json.load(open('$D/$bin-$T-$r.json'));print('$bin $T r$r $ts load $l', round(d['prefill_tok_s'],1), round(d['decode_tok_s'],2), d['kernel_level'], round(d['decode_fraction_of_memory_bandwidth'],3), round(d['measured_memory_gb_s'],1))" >> $D/summary.txt
      fi
    done
  done
done
