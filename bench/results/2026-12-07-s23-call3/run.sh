#!/bin/bash
# Session 23, device call 3 (issue 11: decode): carry .device/s23c (BUILT_FROM): minfer-prev = main 6309185;
# minfer-bt = + the bench's timers in one more run (not in the measured ones); minfer, cuda.test, core.test = + a
# device block's gate and up as two row-view mat-muls at every step (the fused gate/up+swiglu kernel, mvs_*_w).
# Every core GPU test, the decode op tests, decode prev / bt / head on the 1.1B (three rounds) and bt / head on
# the 8B (two), the 8B prefill and half offload on the head, then every CUDA op test while time is left.
. bench/lib/device.sh .device/s23c
synth8
synth1
td
tst core-gpu core 120 MINFER_TESTDATA=$D/td $D/core.test -test.run GPU
grep -E "positions, [0-9]+ of" $L/core-gpu.txt | sed 's/.*: 44 positions, //' | cut -c1-40 | sort | uniq -c | tee -a $S
for r in 1 2 3; do for m in minfer-prev minfer-bt minfer; do bn $D/$m bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23; done; done
bn MINFER_CUDA_DECODE=mvnorm,mvrope,swmv $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
wait $SP; tail -1 $L/synth8.txt | tee -a $S
for r in 1 2; do for m in minfer-bt minfer; do bn $D/$m bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33; done; done
bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33
bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 16
tst cuda-op core/backend/cuda 170 $D/cuda.test -test.skip 'NoDriver|TestPTXMatchesSources'
