#!/bin/bash
# Session 29: the issue-11 targets on an H200 (the issue's machine), s27's head against main (the carry of
# `bash bench/lib/build.sh s27b main` from an s27 checkout: minfer-base main 1dfae0f; minfer, cuda.test, core.test
# s27 a97db7f). Run from that checkout: `bash bench/results/2026-12-07-s29-h200/run.sh`, carry [".device/s27b"].
# Each step only while time is left (limit the call to ≤ 600 s).
. bench/lib/device.sh .device/${CARRY:-s27b}
synth1
synth8
td
tst core-gpu core 170 MINFER_TESTDATA=$D/td $D/core.test -test.run GPU
B1="bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23"
BT=40
for r in 1 2; do bn $D/minfer-base $B1; bn $D/minfer $B1; done
snap
BT=120
bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 5 --gpu-layers 23
wait $SP; tail -2 $L/synth8.txt | tee -a $S
bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33
bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 16
snap
T=$((560 - SECONDS)); [ $T -gt 60 ] && tst cuda-full core/backend/cuda $T $D/cuda.test
