#!/bin/bash
# Session 22, device call 7 (issue 11: 8B prefill) — not run (README). Carry .device/s22f (BUILT_FROM):
# minfer-base = main; minfer-mmq = + the pipelined mat-mul's two barriers a k-step; minfer, cuda.test, core.test =
# + the kept softmax's exps and block sums in one pass (s22-unverified.patch). Flash/mat-mul op tests and the core
# prefill/logit GPU tests beside the 8B synth, then 8B pp512 base / mmq / head, twice. (~150 s)
. bench/lib/device.sh .device/s22f
synth8
tst cuda-op core/backend/cuda 70 $D/cuda.test -test.run 'Flash|MMQ|PTX'
td
tst core-gpu core 60 MINFER_TESTDATA=$D/td $D/core.test -test.run 'GPUPrefill|GPULogits'
grep -E "positions, [0-9]+ of" $L/core-gpu.txt | sed 's/.*: 44 positions, //' | cut -c1-40 | sort | uniq -c | tee -a $S
wait $SP; tail -1 $L/synth8.txt | tee -a $S
for r in 1 2; do
  for m in minfer-base minfer-mmq minfer; do bn $D/$m bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33; done
done
