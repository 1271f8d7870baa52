#!/bin/bash
# Local runs on the 2-core dev VM (AMD EPYC, AVX2+FMA+F16C, no AVX-512),
# shared with other engineers: each line records the load average.
# minfer-base: the branch point (f4f462e), minfer-new: this branch's head;
# both built with CGO_ENABLED=0 from a tiny main that calls cli.Main.
# Models: minfer synth --preset 1b --type {Q4_0,Q8_0,Q4_K} -o bench/tmp/1b-T.gguf
R=bench/results/2026-12-01-cpu-simd
for t in Q4_0 Q8_0 Q4_K; do
  f=bench/tmp/1b-$t.gguf
  echo "== $t new run 1 $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log.txt
  bench/tmp/minfer-new bench -m $f -p 128 -n 64 -t 2 -r 3 --json > $R/new-$t-1.json 2>>$R/log.txt
  echo "== $t base $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log.txt
  bench/tmp/minfer-base bench -m $f -p 128 -n 64 -threads 2 --json > $R/base-$t.json 2>>$R/log.txt
  echo "== $t new run 2 $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log.txt
  bench/tmp/minfer-new bench -m $f -p 128 -n 64 -t 2 -r 3 --json > $R/new-$t-2.json 2>>$R/log.txt
done
echo "== done $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log.txt
