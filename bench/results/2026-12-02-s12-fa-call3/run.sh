#!/bin/bash
# Session 12 helper fattn-mma, H200 call 3: TestFlashAttention with the new hole cases for head sizes 64 and
# 128 (NaN in the cells no row sees; one odd cache length), on the tensor-core kernel and the exact ones, plus
# the fattn shared tests; then head size 64 in a model: the 1.1B-shaped Q4_0 preset, prefill 512 alternating the
# default (mma) and MINFER_CUDA_FATTN=exact, and ncu per-kernel durations (graphs off) of that prefill on both.
# Carry .device/fa3. Logs: $OUT.
R=$PWD; D=$R/.device/fa3; L=/tmp/L; mkdir -p $L
(cd $D && xz -d -f bins.tar.xz && tar xf bins.tar && rm bins.tar && chmod +x cuda.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; echo "synth1b rc=$?" >> $L/synth.txt) &
SP=$!
(cd core/backend/cuda && timeout 120 $D/cuda.test -test.v -test.count=1 -test.run 'TestFlashAttention|TestFattn' > $L/fa.txt 2>&1; echo "TestFlashAttention rc=$? pass=$(grep -c -- '--- PASS' $L/fa.txt) fail=$(grep -c -- '--- FAIL' $L/fa.txt) ${SECONDS}s" | tee -a $S)
grep -E -- "--- FAIL|ILLEGAL|panic|NaN" $L/fa.txt | head -12 | tee -a $S
awk '/^=== RUN/{c=$3} /NMSE/ && (c ~ /mma\/hd/ || c ~ /holestrue/) {sub(/^ +/,""); print c": "$0}' $L/fa.txt | tee -a $S
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 60 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn MINFER_CUDA_FATTN= $D/minfer bench -m /tmp/1b.gguf -p 512 -n 2 -r 3 --gpu-layers 23
  bn MINFER_CUDA_FATTN=exact $D/minfer bench -m /tmp/1b.gguf -p 512 -n 2 -r 3 --gpu-layers 23
done
nc() { tag=$1; shift; echo "## ncu $tag: $*" | tee -a $S; MINFER_CUDA_GRAPHS=0 timeout 90 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --print-summary per-kernel "$@" > $OUT/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  grep -E "^  [a-zA-Z_0-9]+|gpu__time_duration.sum" $OUT/ncu-$tag.txt | paste - - | awk '{printf "%s %s %s | n=%s | us min/max/avg %s %s %s\n",$1,$2,$3,$(NF-8),$(NF-2),$(NF-1),$NF}' | grep -E "fattn|attn_used|mmqp" | tee -a $S; }
nc pre1b --launch-skip 0 --launch-count 120 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 1 --gpu-layers 23
MINFER_CUDA_FATTN=exact nc pre1bx --launch-skip 0 --launch-count 120 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 1 --gpu-layers 23
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
