#!/bin/bash
# baseline: minfer (avx512 default, avx2 forced) and llama-bench, per type
cd /tmp/cd
for T in Q4_K_M Q4_0 Q8_0 Q4_K; do
  echo "$T $(date -u +%T) $(cut -d' ' -f1 /proc/loadavg)" >> base/log.txt
  ./minfer-base bench -m 1b-$T.gguf -p 128 -n 64 -t 2 -r 3 --json > base/$T-avx512-1.json
  MINFER_CPU_LEVEL=avx2 ./minfer-base bench -m 1b-$T.gguf -p 128 -n 64 -t 2 -r 3 --json > base/$T-avx2-1.json
  [ $T != Q4_K ] && /work/shared/tools/llama.cpp/llama-bench -m 1b-$T.gguf -p 128 -n 64 -t 2 -r 3 -o json > base/$T-llama-1.json 2>/dev/null
done
