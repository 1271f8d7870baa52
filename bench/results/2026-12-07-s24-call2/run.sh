#!/bin/bash
# Session 24, device call 2 (issue 11): carry .device/s24b (bash bench/lib/build.sh s24b main): minfer-base = main
# f399b46 (runtime code as fd55ea6); minfer, cuda.test, core.test = s24 df81f10 (the next decode step queued behind a gate: gate.go,
# core/prelaunch.go). The gate's op test, the polled reads', every core GPU test (the new TestGPUPrelaunchSameLogits
# among them), then decode base / head / head with MINFER_PRELAUNCH=0 alternating on the 1.1B, the head's host
# trace, pp512 base / head (a dropped queued step is waited for before the next prompt), and the 8B decode base /
# head. (Cut to fit the budget several failed starts left: no 8B.)
. bench/lib/device.sh .device/s24b
synth1
tst cuda-gate core/backend/cuda 60 $D/cuda.test -test.run 'Gated|PolledReads|PTX|Thread'
td
tst core-gpu core 120 MINFER_TESTDATA=$D/td $D/core.test -test.run GPU
grep -E "positions, [0-9]+ of" $L/core-gpu.txt | sed 's/.*: 44 positions, //' | cut -c1-40 | sort | uniq -c | tee -a $S
grep -E "queued steps taken" $L/core-gpu.txt | tee -a $S
for r in 1 2 3; do
  bn $D/minfer-base bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn MINFER_PRELAUNCH=0 $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  snap
done
bn MINFER_CUDA_TRACE=1 $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
grep "cuda trace" $L/b.txt | tail -2 | cut -c1-300 | tee -a $S
for m in minfer-base minfer; do bn $D/$m bench -m /tmp/1b.gguf -p 512 -n 1 -r 10 --gpu-layers 23; done
snap
