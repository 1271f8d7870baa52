#!/bin/bash
# Session 3, perf call: which decode path pays (1.1B Q4_0 and an 8B-shaped
# Q4_K with 4 blocks), every switch alone, same binary as the final call.
D=$PWD/.device/perf; B=$OUT/perf.txt
(cd $D && gunzip -f *.gz && chmod +x minfer synthl.bin)
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $B
timeout 20 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $B 2>&1
t0=$SECONDS; timeout 60 $D/synthl.bin 8b Q4_K 4 /tmp/8b4.gguf >> $B 2>&1; echo "synthl 8b Q4_K 4 blocks rc=$? $((SECONDS-t0))s" >> $B
for cfg in "X=1" "MINFER_CUDA_MV=v1" "MINFER_CUDA_DECODE=one" "MINFER_CUDA_DECODE=normmv" "MINFER_CUDA_MV=v1 MINFER_CUDA_DECODE=one,normmv" "MINFER_DEVICE_FUSION=0" "MINFER_CUDA_MV=v1 MINFER_CUDA_DECODE=one,normmv MINFER_DEVICE_FUSION=0"; do
  for m in "1b.gguf --gpu-layers 23" "8b4.gguf --gpu-layers 5"; do
    set -- $m
    echo "## $cfg minfer bench -m $1 -p 64 -n 128 -r 3 $2 $3" >> $B
    env $cfg timeout 30 $D/minfer bench -m /tmp/$1 -p 64 -n 128 -r 3 $2 $3 2>&1 | grep -E "decode|prefill" >> $B
  done
done
echo "## default minfer bench -m 8b4.gguf -p 512 -n 16 -r 3 --gpu-layers 5; then MINFER_CUDA_MMQ=plain" >> $B
timeout 30 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 16 -r 3 --gpu-layers 5 2>&1 | grep prefill >> $B
MINFER_CUDA_MMQ=plain timeout 30 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 16 -r 3 --gpu-layers 5 2>&1 | grep prefill >> $B
echo "total ${SECONDS}s" >> $B; cat $B
