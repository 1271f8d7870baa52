#!/bin/bash
# Session 5, call 2 (issue 11): where a decode step's host time goes. minfer bench --cpuprofile (Go CPU
# profile of the measured runs) on the 1.1B Q4_0 (all blocks + output) and the 8B-shaped Q4_K with 4
# blocks (all + output), programmatic dependent launch off (MINFER_CUDA_PDL=0: the measured default
# candidate), then the 8B-shaped one with graphs off for the eager figure.
R=$PWD; D=$R/.device/s5a; L=/tmp/L; mkdir -p $L
(cd $D && for f in *.gz; do [ -f "$f" ] && gunzip -f "$f"; done; chmod +x minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
timeout 40 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf 2>&1 | tail -1 | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 90 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "prefill|decode|device|rc=|rror" $L/b.txt | tee -a $S; }
bn MINFER_CUDA_PDL=0 $D/minfer bench -m /tmp/1b.gguf -p 16 -n 256 -r 3 --gpu-layers 23 --cpuprofile $OUT/1b.prof
bn MINFER_CUDA_PDL=0 $D/minfer bench -m /tmp/8b4.gguf -p 16 -n 256 -r 3 --gpu-layers 5 --cpuprofile $OUT/8b4.prof
bn MINFER_CUDA_PDL=0 MINFER_CUDA_GRAPHS=0 $D/minfer bench -m /tmp/8b4.gguf -p 16 -n 256 -r 3 --gpu-layers 5
echo "total ${SECONDS}s" | tee -a $S
