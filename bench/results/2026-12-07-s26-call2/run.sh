#!/bin/bash
# Session 26, device call 2 (issue 11): carry .device/s26a (bash bench/lib/build.sh s26a main, from branch s26):
# minfer-base = main 07cb4f9 (s25 merged); minfer, cuda.test, core.test = s26 (a quantized model's long prefill
# batches, T·kvLen >= 128·256, on the tensor-core attention; FlashStats; TestGPUPrefillMatchesCPU's long modes;
# MINFER_CUDA_L2PF=N[,MiB], norm_one's extra blocks prefetching the next mat-vec's weights into L2, off by default).
# Run from a checkout of s26 (the PTX hash test reads the working tree's .cu files). In order of priority: the flash
# op tests; the prefill GPU test (long modes); every core GPU test; 8B pp512 base/head x2, pp128 / pp64 head; 1.1B
# pp512; 1.1B and 8B decode with L2 prefetch arms; 1.1B decode knob arms (mat-vec warps and split rows, norm_one's
# block); half offload.
. bench/lib/device.sh .device/s26a
synth1
synth8
tst cuda-fa core/backend/cuda 150 $D/cuda.test -test.run 'Fattn|Flash|PTX|PDL|NormTie|L2'
td
tst core-prefill core 120 MINFER_TESTDATA=$D/td $D/core.test -test.run 'GPUPrefill'
grep -E "tokens: the attention|positions, .* logits differ" $L/core-prefill.txt | grep -E "160 positions" | head -12 | tee -a $S
tst core-gpu core 200 MINFER_TESTDATA=$D/td $D/core.test -test.run 'GPU' -test.skip 'GPUPrefill'
echo "## 8B Q4_K" | tee -a $S
wait $SP; tail -1 $L/synth8.txt | tee -a $S
BT=90
P8="bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33"
for r in 1 2; do bn $D/minfer-base $P8; bn $D/minfer $P8; done
bn MINFER_CUDA_FATTN=exact $D/minfer $P8
for p in 128 64; do bn $D/minfer-base bench -m /tmp/8b.gguf -p $p -n 1 -r 5 --gpu-layers 33; bn $D/minfer bench -m /tmp/8b.gguf -p $p -n 1 -r 5 --gpu-layers 33; done
snap
BT=40
for m in minfer-base minfer; do bn $D/$m bench -m /tmp/1b.gguf -p 512 -n 1 -r 10 --gpu-layers 23; done
B1="bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23"
for r in 1 2; do
  bn $D/minfer-base $B1
  bn $D/minfer $B1
  for pf in 32 128 128,4 128,32; do bn MINFER_CUDA_L2PF=$pf $D/minfer $B1; done
done
snap
BT=60
B8="bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33"
bn $D/minfer $B8
for pf in 128 128,32; do bn MINFER_CUDA_L2PF=$pf $D/minfer $B8; done
bn $D/minfer $B8
snap
BT=40
for w in 2 4 8; do bn MINFER_CUDA_MVS_WARPS=$w $D/minfer $B1; done
for k in 2 4 8; do bn MINFER_CUDA_MVK_ROWS=$k $D/minfer $B1; done
bn MINFER_CUDA_NORM1_THREADS=512 $D/minfer $B1
bn $D/minfer $B1
snap
BT=150
bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 16
