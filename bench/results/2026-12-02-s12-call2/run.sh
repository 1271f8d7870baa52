#!/bin/bash
# Session 12 lead, H200 call 2 (issue 11): half offload — the 8B-shaped Q4_K model with 16 of its 32 blocks on
# the GPU (the rest on the host's CPU, 16 threads), pp512 / tg128, three repetitions, twice; then all 33
# (blocks + output) once for the record. Built from the commit in BUILT_FROM. Carry .device/s12b.
R=$PWD; D=$R/.device/s12b; L=/tmp/L; mkdir -p $L
(cd $D && xz -d -f minfer.xz && chmod +x minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo)" | tee $S
t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 150 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|^CPU|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 16
done
bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
