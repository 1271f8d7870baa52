#!/bin/bash
# cudaglue device call 1: why is half offload slow? CPU-only vs half at several thread counts, /proc/stat around each run, CPU profiles.
D=$(cd "$(dirname "$0")" && pwd)
cd $D && gunzip -f minfer.gz && chmod +x minfer
L=$OUT/diag.txt
{
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
echo "nproc=$(nproc)"; cat /sys/fs/cgroup/cpu.max 2>&1; grep -m1 'model name' /proc/cpuinfo; grep -o -m1 -w 'avx512f' /proc/cpuinfo
lscpu 2>&1 | grep -E 'Thread|Core|Socket|NUMA|MHz|Hypervisor'
t0=$(date +%s%N); $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf; echo "synth $(( ($(date +%s%N)-t0)/1000000 )) ms"
} > $L 2>&1
run() { echo "## $*"; head -1 /proc/stat; local t0=$(date +%s%N); timeout 60 $D/minfer bench -m /tmp/1b.gguf "$@"; echo "rc=$? wall $(( ($(date +%s%N)-t0)/1000000 )) ms"; head -1 /proc/stat; }
{
run -p 64 -n 16 --gpu-layers 0 -t 16 -cpuprofile $OUT/cpu16.prof
run -p 64 -n 16 --gpu-layers 0 -t 8
run -p 64 -n 16 --gpu-layers 11 -t 16 -cpuprofile $OUT/half16.prof
run -p 64 -n 16 --gpu-layers 11 -t 8 -cpuprofile $OUT/half8.prof
run -p 64 -n 16 --gpu-layers 11 -t 4
GOMAXPROCS=20 run -p 64 -n 16 --gpu-layers 11 -t 16
run -p 64 -n 16 --gpu-layers 23 -t 16
} >> $L 2>&1
cat $L
