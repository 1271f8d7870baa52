#!/bin/bash
# Session 26, device call 4 (issue 11): carry .device/s26c (bash bench/lib/build.sh s26c 95f7d60, from main 1825bc0, the code of 4041f6d):
# the op tests of the one-token mat-vecs and their fusions with blocks of four warps everywhere (the new default,
# 4041f6d). Little device time is left, so nothing else.
. bench/lib/device.sh .device/s26c
tst cuda-mv core/backend/cuda 75 $D/cuda.test -test.run 'MatVec|Mvs|Decode|Tail|NormTie|Swiglu|Split|Pipe|Warps'
