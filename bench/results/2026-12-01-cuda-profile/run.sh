#!/bin/bash
# Profile one decode step of a 1.1B Q4_0 model, all blocks on the GPU, CUDA graphs off
# (ncu times each kernel; --clock-control none leaves the clocks alone).
D=$PWD/.device/prof
gunzip -f $D/minfer.gz; chmod +x $D/minfer
P=$OUT/ncu-decode.txt
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $P
t0=$(date +%s); timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/m.gguf > /dev/null 2>&1; echo "synth: $(( $(date +%s)-t0 )) s" >> $P
which ncu >> $P 2>&1
echo "## MINFER_CUDA_GRAPHS=0 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 1500 --launch-count 480 minfer bench -m 1b-q4_0.gguf -p 16 -n 6 --gpu-layers 23" >> $P
MINFER_CUDA_GRAPHS=0 timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 1500 --launch-count 480 $D/minfer bench -m /tmp/m.gguf -p 16 -n 6 --gpu-layers 23 >> $P 2>&1
echo "ncu rc=$?" >> $P
grep -E "^  [a-z_0-9]+|gpu__time_duration.sum|Invocations|ncu rc|synth" $P | head -120
