#!/bin/bash
# Prepared in session 29 for the next device call (issue 11). Carry, from a main checkout at 4416f36 or later:
#   ALT_TESTS=1 bash bench/lib/build.sh s29n 1dfae0f s29d
# minfer-base: main before session 29 (1dfae0f); minfer, cuda.test, core.test: main (s27's cuts 2–5 landed, change
# 1 reverted); minfer-alt, cuda-alt.test: branch s29d (s27's change 1 — the rope's cos/sin before attn_x_one_rope's
# PDL wait — with a switch, MINFER_CUDA_CSORDER: "first" (default) the cos/sin before the cached reads' copies are
# issued, "after" after them (the position and freq loaded before them), "late" after the wait. s27 computed them
# after the copies with the loads after too; the cos/sin load their polynomial coefficients from global memory
# (LDG.CONSTANT), which at long contexts queue behind the V rows' copies: the suspected cost).
# Run from that checkout: `bash bench/results/2026-12-07-s29-next/run.sh`, carry [".device/s29n"], limit 600 s.
# What it answers: what main decodes (1.1B and 8B, from an empty context and after 512 tokens) against the old main
# and against change 1 in each order — session 29 measured s27 +1.9 %
# (1.1B, -p 1) but −2.4 % (8B after 512) and could not measure the landed combination; then the GPU tests of main
# and alt's attention tests; on an H200 also the targets.
. bench/lib/device.sh .device/${CARRY:-s29n}
synth1
synth8
H200=0; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && H200=1
# The tests first, while the 8B synth runs on the host's CPUs (session 29's call 3 timed the 1.1B beside it: noise).
td
tst core-gpu core 120 MINFER_TESTDATA=$D/td $D/core.test -test.run GPU
tst cuda-alt core/backend/cuda 60 $D/cuda-alt.test -test.run 'RopeStoreAttention|AttnOne|Rope'
wait $SP; tail -2 $L/synth8.txt | tee -a $S
arms() { bn $D/minfer-base "$@"; bn $D/minfer "$@"; for o in first after late; do bn MINFER_CUDA_CSORDER=$o $D/minfer-alt "$@"; done; }
BT=40
for r in 1 2 3; do arms bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23; done
snap
BT=90
for r in 1 2; do arms bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33; done
arms bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
snap
for r in 1 2; do arms bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23; done
# the same after 2048 tokens (the 8B): the copies grow with the context
arms bench -m /tmp/8b.gguf -p 2048 -n 128 -r 2 --gpu-layers 33
snap
if [ $H200 = 1 ]; then
  BT=120
  bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 5 --gpu-layers 23
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 16
  snap
fi
T=$((575 - SECONDS)); [ $T -gt 40 ] && tst cuda-full core/backend/cuda $T $D/cuda.test
