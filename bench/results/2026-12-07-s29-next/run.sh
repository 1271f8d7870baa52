#!/bin/bash
# Prepared in session 29 for the next device call (issue 11). Carry, from a main checkout at 4416f36 (or later):
#   bash bench/lib/build.sh s29n 1dfae0f s27
# minfer-base: main before session 29 (1dfae0f); minfer, cuda.test, core.test: main 4416f36 (s27's cuts 2–5 landed,
# change 1 reverted); minfer-alt: s27 a97db7f (with change 1: the rope's cos/sin before attn_x_one_rope's PDL wait).
# Run from that checkout: `bash bench/results/2026-12-07-s29-next/run.sh`, carry [".device/s29n"], limit 600 s.
# What it answers: what main now decodes (1.1B and 8B, from an empty context and after 512 tokens) against the old
# main and against s27 — session 29 measured s27 +1.9 % (1.1B, -p 1) but −2.4 % (8B after 512) and could not
# measure the landed combination; on an H200 also the targets and every GPU test there.
. bench/lib/device.sh .device/${CARRY:-s29n}
synth1
synth8
H200=0; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && H200=1
B1="bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23"
BT=40
for r in 1 2 3; do bn $D/minfer-base $B1; bn $D/minfer $B1; bn $D/minfer-alt $B1; done
snap
wait $SP; tail -2 $L/synth8.txt | tee -a $S
BT=90
B8="bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33"
for r in 1 2; do bn $D/minfer-base $B8; bn $D/minfer $B8; bn $D/minfer-alt $B8; done
B8p1="bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33"
bn $D/minfer-base $B8p1; bn $D/minfer $B8p1; bn $D/minfer-alt $B8p1
B1l="bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23"
for r in 1 2; do bn $D/minfer-base $B1l; bn $D/minfer $B1l; bn $D/minfer-alt $B1l; done
snap
if [ $H200 = 1 ]; then
  BT=120
  bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 5 --gpu-layers 23
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 16
  snap
fi
td
[ $SECONDS -lt 420 ] && tst core-gpu core 120 MINFER_TESTDATA=$D/td $D/core.test -test.run GPU
T=$((570 - SECONDS)); [ $T -gt 60 ] && tst cuda-full core/backend/cuda $T $D/cuda.test
