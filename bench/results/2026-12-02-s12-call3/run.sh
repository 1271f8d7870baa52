#!/bin/bash
# Session 12 lead, H200 call 3 (issue 11): expf16 in common.cuh with the float power-of-two step (fattn_mma's
# exp_f16, now the one form; decode.ptx, fattn.ptx, ops.ptx change): the whole CUDA op test binary (the exact
# kernels must keep the CPU's bits), then the 1.1B Q4_0 prefill (exact attention: quantized) and decode.
# Carry .device/s12c.
R=$PWD; D=$R/.device/s12c; L=/tmp/L; mkdir -p $L
(cd $D && xz -d -f bins.tar.xz && tar xf bins.tar && rm bins.tar && chmod +x cuda.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; echo "synth1b rc=$?" >> $L/synth.txt) &
SP=$!
(cd core/backend/cuda && timeout 200 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 60 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 64 -r 3 --gpu-layers 23
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
