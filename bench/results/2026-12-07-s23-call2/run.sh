#!/bin/bash
# Session 23, device call 2 (issue 11: prefill): carry .device/s23b (BUILT_FROM): minfer-base = main a059223;
# minfer, cuda.test, core.test = s23 bffa069 (a batch's swiglu and norm chain write the tensor-core mat-mul's
# activation layout). The op tests of the fused chains and the mat-muls, every core GPU test, pp512 base / head on
# the 1.1B and the 8B (alternating), the 1.1B decode's host trace, and ncu's kernel list of 1.1B decode steps.
. bench/lib/device.sh .device/s23b
synth8
synth1
tst cuda-op core/backend/cuda 150 $D/cuda.test -test.run 'ChainsFeedMMQ|MMQ|DecodeChains|SwigluMatVec|FloatOps|PTX|Flash'
td
tst core-gpu core 100 MINFER_TESTDATA=$D/td $D/core.test -test.run GPU
grep -E "positions, [0-9]+ of" $L/core-gpu.txt | sed 's/.*: 44 positions, //' | cut -c1-40 | sort | uniq -c | tee -a $S
for r in 1 2; do for m in minfer-base minfer; do bn $D/$m bench -m /tmp/1b.gguf -p 512 -n 1 -r 10 --gpu-layers 23; done; done
bn MINFER_CUDA_TRACE=1 $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
grep -iE "hand-off|queue" $L/b.txt | tail -4 | tee -a $S
wait $SP; tail -1 $L/synth8.txt | tee -a $S
for r in 1 2; do for m in minfer-base minfer; do bn $D/$m bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33; done; done
snap
echo "## ncu 1.1B decode kernels (graphs off)" | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum --csv --launch-skip 3000 --launch-count 480 $D/minfer bench -m /tmp/1b.gguf -p 1 -n 32 -r 1 --gpu-layers 23 > $L/ncu-dec1b.csv 2>&1; echo "rc=$? ${SECONDS}s lines=$(wc -l < $L/ncu-dec1b.csv)" | tee -a $S
