#!/bin/bash
# Session 26, device call 3 (issue 11): carry .device/s26b (bash bench/lib/build.sh s26b 07cb4f9, from main 95f7d60, the same code as b677cc9):
# minfer-base = 07cb4f9 (main before the tensor-core threshold), minfer, cuda.test, core.test = main 95f7d60.
# The whole cuda op test binary on main's kernels (s25's rope_tail through rope_cs had only its own tests on a GPU);
# then the one-token mat-vec blocks at 4 warps (MINFER_CUDA_MVS_WARPS=4, one run at 992.5 in call 2) against the
# default, alternating, 1.1B and 8B decode.
. bench/lib/device.sh .device/s26b
synth1
synth8
tst cuda-all core/backend/cuda 300 $D/cuda.test
BT=40
B1="bench -m /tmp/1b.gguf -p 1 -n 128 -r 5 --gpu-layers 23"
for r in 1 2 3 4; do bn $D/minfer $B1; bn MINFER_CUDA_MVS_WARPS=4 $D/minfer $B1; done
snap
wait $SP; tail -1 $L/synth8.txt | tee -a $S
BT=60
B8="bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33"
for r in 1 2; do bn $D/minfer $B8; bn MINFER_CUDA_MVS_WARPS=4 $D/minfer $B8; done
