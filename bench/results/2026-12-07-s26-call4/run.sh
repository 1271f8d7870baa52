#!/bin/bash
# Session 26, device call 4 (issue 11): carry .device/s26c (bash bench/lib/build.sh s26c 95f7d60, from main 4041f6d):
# the op tests of the one-token mat-vecs and their fusions with blocks of four warps everywhere (the new default),
# then the 1.1B decode against 95f7d60 if time is left.
. bench/lib/device.sh .device/s26c
tst cuda-mv core/backend/cuda 130 $D/cuda.test -test.run 'MatVec|Mvs|Decode|Tail|NormTie|Swiglu|Split|Pipe|Warps'
synth1
BT=30
B1="bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23"
bn $D/minfer-base $B1; bn $D/minfer $B1
