#!/bin/sh
# Longer A/B of minfer before (2cf4672) and after (cpuq6k) on the Q4_K_M
# file (its Q6_K tensors are the ones the new kernel runs): -r 3 (a warm-up
# run, then three) per invocation, five alternating rounds, order swapped
# each round.
set -u
OUT=${OUT:-bench/results/2026-12-01-s8-cpuq6k/raw-ab}
mkdir -p "$OUT"
M=/tmp/s8models/synth-1b-${T:-Q4_K_M}.gguf
order="main br"
for round in 1 2 3 4 5; do
	for who in $order; do
		/tmp/minfer-$who bench -m "$M" -p 128 -n 64 -t 2 -r 3 --json >"$OUT/${T:-Q4_K_M}-r$round-$who.json" 2>"$OUT/${T:-Q4_K_M}-r$round-$who.err"
	done
	order=$(echo $order | awk '{print $2, $1}')
done
