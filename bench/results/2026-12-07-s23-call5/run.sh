#!/bin/bash
# Session 23, device call 5 (issue 11): call 4's two new op tests with the exact flash kernels asked for (the shared
# test backend without quantized weights took the tensor-core attention there), and TestSwigluMatVec. Carry
# .device/s23e (cuda.test only, BUILT_FROM).
. bench/lib/device.sh .device/s23e
tst new core/backend/cuda 40 $D/cuda.test -test.run 'TestAttentionsShareTheirMaskScan|TestRopeStoreBatch|TestSwigluMatVec'
grep -E "differ|launches" $L/new.txt | head -20 | tee -a $S
