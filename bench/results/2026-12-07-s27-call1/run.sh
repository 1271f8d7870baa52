#!/bin/bash
# Session 27, call 1 (issue 11), cut to ~130 s (twelve failed starts had left 344 s of device time). Carry: from an
# s27 checkout, `bash bench/lib/build.sh s27b main` (minfer-base: main; minfer, cuda.test, core.test: s27); run from
# that checkout with `bash bench/results/2026-12-07-s27-call1/run.sh` and carry [".device/s27b"]. In order: the 1.1B
# decode of base, head and head without the read's help (MINFER_CUDA_READHELP=0), two alternating rounds; the cuda
# op tests of the changed paths (the one-token attention with the rope group, the norms, the polled reads, PDL);
# the core GPU logits test (llama.cpp's logits over every model at gpu-layers 0, 1, all, all+output).
. bench/lib/device.sh .device/${CARRY:-s27b}
synth1
B1="bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23"
BT=30
for r in 1 2; do bn $D/minfer-base $B1; bn $D/minfer $B1; bn MINFER_CUDA_READHELP=0 $D/minfer $B1; done
snap
tst cuda-s27 core/backend/cuda 40 $D/cuda.test -test.run 'RopeStoreAttention|Norm1Block|NormTieRows|PDL|PTX|Polled|Gate|Thread'
td
tst core-gpu core 50 MINFER_TESTDATA=$D/td $D/core.test -test.run 'GPULogitsMatch|GPUPrelaunch'
