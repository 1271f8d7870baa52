#!/bin/bash
# Session 23, device call 1 (issue 11: 8B prefill): session 22's unverified patch (call 7's README). Carry .device/s23a
# (BUILT_FROM): minfer-base = main 12ef272; minfer-mmq = + the pipelined mat-mul's two barriers a k-step; minfer,
# cuda.test, core.test = + the kept softmax's exps and block sums in one pass. Every CUDA op test and every core GPU
# test on the head, then pp512 base / mmq / head on the 8B (twice) and the 1.1B. (~300 s)
. bench/lib/device.sh .device/s23a
synth8
synth1
tst cuda-op core/backend/cuda 170 $D/cuda.test -test.skip 'NoDriver|TestPTXMatchesSources'
td
tst core-gpu core 100 MINFER_TESTDATA=$D/td $D/core.test -test.run GPU
grep -E "positions, [0-9]+ of" $L/core-gpu.txt | sed 's/.*: 44 positions, //' | cut -c1-40 | sort | uniq -c | tee -a $S
for m in minfer-base minfer; do bn $D/$m bench -m /tmp/1b.gguf -p 512 -n 1 -r 10 --gpu-layers 23; done
wait $SP; tail -1 $L/synth8.txt | tee -a $S
for r in 1 2; do
  for m in minfer-base minfer-mmq minfer; do bn $D/$m bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33; done
done
