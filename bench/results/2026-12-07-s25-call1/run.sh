#!/bin/bash
# Session 25, device call 1 (issue 11): carry .device/s25a (from the s25 worktree: bash bench/lib/build.sh s25a main):
# minfer-base = main 3d46b40 (runtime code as fd55ea6); minfer, cuda.test, core.test = s25 b2dd020 (s24's next decode
# step queued behind a gate, MINFER_PRELAUNCH=0 off; the helper's host24: signature in six lanes, a decode step's
# input copies captured into its graph, MINFER_CUDA_INPUTS=ring off; rope_tail through rope_cs; MINFER_CUDA_TWICE).
# In order of priority (what a call cut short returns is what ran first): op and core GPU tests; the 1.1B decode
# base / head / head with the inputs on the ring / head without the queued step, two rounds; MINFER_CUDA_TWICE arms;
# the 8B Q4_K (synthesized in the background from the start): pp512 base / head / head with MINFER_CUDA_FATTN=mma,
# decode base / head; the trace and 1.1B pp512; last ncu's full sections and SASS stall samples of attn_x_one_rope
# and norm_one. (A third binary, s24 itself, made the tree over the 64 MiB limit.)
. bench/lib/device.sh .device/s25a
synth1
synth8
tst cuda-new core/backend/cuda 90 $D/cuda.test -test.run 'Gated|GateWords|PolledReads|PTX|Thread|Input|Signature|Compute|RopeTail'
td
tst core-gpu core 150 MINFER_TESTDATA=$D/td $D/core.test -test.run 'GPU'
grep -E "queued steps taken|input block" $L/core-gpu.txt | head -20 | tee -a $S
# A queued step that never opens would hold a run to its timeout: without the GPU test's pass, none queued from here.
grep -q -- "--- PASS: TestGPUPrelaunchSameLogits" $L/core-gpu.txt || { export MINFER_PRELAUNCH=0; echo "PRELAUNCH OFF from here" | tee -a $S; }
export BT=40
B1="bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23"
for r in 1 2; do
  bn $D/minfer-base $B1
  bn $D/minfer $B1
  bn MINFER_CUDA_INPUTS=ring $D/minfer $B1
  bn MINFER_PRELAUNCH=0 $D/minfer $B1
  snap
done
# in-graph cost of kernel classes: each launch of the prefix issued twice
for k in norm_one attn_x_one mvs_; do bn MINFER_CUDA_TWICE=$k $D/minfer $B1; done
bn $D/minfer $B1
snap
echo "## 8B Q4_K" | tee -a $S
wait $SP; tail -1 $L/synth8.txt | tee -a $S
BT=90
P8="bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33"
bn $D/minfer-base $P8
bn $D/minfer $P8
bn MINFER_CUDA_FATTN=mma $D/minfer $P8
bn $D/minfer-base bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
bn MINFER_CUDA_FATTN=mma $D/minfer $P8
bn $D/minfer $P8
snap
BT=40
bn MINFER_CUDA_TRACE=1 $D/minfer $B1
grep "cuda trace" $L/b.txt | tail -2 | cut -c1-300 | tee -a $S
for m in minfer-base minfer; do bn $D/$m bench -m /tmp/1b.gguf -p 512 -n 1 -r 10 --gpu-layers 23; done
snap
echo "## ncu full sections + SASS stall samples of the head's one-token attention and norm (1.1B decode, graphs off)" | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 100 ncu --clock-control none --set full --import-source no -k 'regex:attn_x_one_rope|norm_one' --launch-skip 300 --launch-count 4 -o $L/prof $D/minfer bench -m /tmp/1b.gguf -p 1 -n 24 -r 1 --gpu-layers 23 > $L/ncu-prof.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
timeout 40 ncu -i $L/prof.ncu-rep --page details > $L/prof-details.txt 2>&1; echo "details rc=$? lines=$(wc -l < $L/prof-details.txt)" | tee -a $S
timeout 40 ncu -i $L/prof.ncu-rep --page source --csv --print-source sass > $L/prof-sass.csv 2>&1; echo "sass rc=$? lines=$(wc -l < $L/prof-sass.csv)" | tee -a $S
rm -f $L/prof.ncu-rep
snap
