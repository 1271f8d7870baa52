#!/bin/bash
# cudaglue device call 2: the half-offload slowdown at -p 512 (call 1 at -p 64 was not slow).
D=$(cd "$(dirname "$0")" && pwd)
cd $D && gunzip -f minfer.gz && chmod +x minfer
L=$OUT/diag2.txt
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $L
$D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $L 2>&1
run() { echo "## $*"; head -1 /proc/stat; grep -E '^(pgfault|pgmajfault) ' /proc/vmstat | tr '\n' ' '; echo; local t0=$(date +%s%N); timeout 45 $D/minfer bench -m /tmp/1b.gguf "$@"; echo "rc=$? wall $(( ($(date +%s%N)-t0)/1000000 )) ms"; head -1 /proc/stat; grep -E '^(pgfault|pgmajfault) ' /proc/vmstat | tr '\n' ' '; echo; }
{
run -p 512 -n 32 --gpu-layers 11 -t 16 -cpuprofile $OUT/half512.prof
run -p 512 -n 32 --gpu-layers 0 -t 16 -cpuprofile $OUT/cpu512.prof
run -p 256 -n 32 --gpu-layers 11 -t 16
run -p 128 -n 32 --gpu-layers 11 -t 16
} >> $L 2>&1
cat $L
