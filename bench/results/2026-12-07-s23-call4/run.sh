#!/bin/bash
# Session 23, device call 4 (issue 11): carry .device/s23d (BUILT_FROM): minfer-base = main 6309185; minfer,
# cuda.test, core.test = s23 5a04b5e (the bench's timers in one more run; swmv off by default; a step's attentions
# of one mask scan it once; a batch's rope/store group as one rope_store_pair launch). The op tests of what changed,
# every core GPU test, pp512 base / head on the 1.1B and the 8B (alternating), the head's decode figures and half
# offload, then every CUDA op test if the call is young enough.
. bench/lib/device.sh .device/s23d
synth8
synth1
tst cuda-chg core/backend/cuda 150 $D/cuda.test -test.run 'RopeStore|RopePair|StoreKV|Attention|Flash|ChainsFeedMMQ|SwigluMatVec|DecodeChains|PTX|DecodeOff'
td
tst core-gpu core 120 MINFER_TESTDATA=$D/td $D/core.test -test.run GPU
grep -E "positions, [0-9]+ of" $L/core-gpu.txt | sed 's/.*: 44 positions, //' | cut -c1-40 | sort | uniq -c | tee -a $S
for r in 1 2; do for m in minfer-base minfer; do bn $D/$m bench -m /tmp/1b.gguf -p 512 -n 1 -r 10 --gpu-layers 23; done; done
for r in 1 2; do bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23; done
wait $SP; tail -1 $L/synth8.txt | tee -a $S
for r in 1 2; do for m in minfer-base minfer; do bn $D/$m bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33; done; done
for r in 1 2; do bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33; done
bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 16
[ $SECONDS -lt 280 ] && tst cuda-op core/backend/cuda 150 $D/cuda.test -test.skip 'NoDriver|TestPTXMatchesSources'
