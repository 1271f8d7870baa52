#!/bin/bash
# Session 24, device call 1 (issue 11): carry .device/s24a (bench/lib/build.sh s24a main): minfer-base = main
# fd55ea6; minfer, cuda.test, core.test = s24 (mvs_*_g: the fused gate|up mat-vec with the swiglu and its
# quantization in groups of 32, one launch). The new op test and the tests session 23's kvFill mend touched, every
# core GPU test, then the 1.1B decode base / head / head with swgroups off, alternating, and ncu's kernel list of
# the head's decode steps (caches not flushed), and of the 8B's (dram bytes too: each mat-vec's bandwidth).
. bench/lib/device.sh .device/s24a
synth8
synth1
tst cuda-chg core/backend/cuda 150 $D/cuda.test -test.run 'SwigluGroups|PTX|DecodeOff|SplitAttentionValues|FlashAttention|AttentionsShareTheirMaskScan|CallErrorsMatchSentinels|StoreKVAndAttention|DecodeAttentionFeedsMatMul|MatVecRopeTail|RopeStoreBatch|RopeStoreAttention'
grep -E "mvs_q[48]_0_g launches|launches [0-9]+, swiglu" $L/cuda-chg.txt | head -5 | tee -a $S
td
tst core-gpu core 120 MINFER_TESTDATA=$D/td $D/core.test -test.run GPU
grep -E "positions, [0-9]+ of" $L/core-gpu.txt | sed 's/.*: 44 positions, //' | cut -c1-40 | sort | uniq -c | tee -a $S
OFF=mvnorm,mvrope,swmv,swgroups
for r in 1 2 3; do
  bn $D/minfer-base bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn MINFER_CUDA_DECODE=$OFF $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
done
bn MINFER_CUDA_TRACE=1 $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
grep "cuda trace" $L/b.txt | tail -2 | cut -c1-300 | tee -a $S
echo "## ncu head decode (graphs off, --cache-control none)" | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 100 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv --launch-skip 3000 --launch-count 400 $D/minfer bench -m /tmp/1b.gguf -p 1 -n 32 -r 1 --gpu-layers 23 > $L/ncu-dec1b.csv 2>&1; echo "rc=$? ${SECONDS}s lines=$(wc -l < $L/ncu-dec1b.csv)" | tee -a $S
wait $SP; tail -1 $L/synth8.txt | tee -a $S
echo "## ncu head 8B decode (graphs off, --cache-control none)" | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 120 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv --launch-skip 6000 --launch-count 300 $D/minfer bench -m /tmp/8b.gguf -p 1 -n 32 -r 1 --gpu-layers 33 > $L/ncu-dec8b.csv 2>&1; echo "rc=$? ${SECONDS}s lines=$(wc -l < $L/ncu-dec8b.csv)" | tee -a $S
