#!/bin/sh
# Side-by-side decode/prefill runs: minfer before (main at 2cf4672, this
# branch's base) and after (branch cpuq6k), and llama.cpp's llama-bench,
# on the same synth files, 2 threads, three alternating rounds per type
# (the order within a round rotates). Run from the repository root of the
# cpuq6k worktree.
#
# Binaries (CGO_ENABLED=0 go build -tags nogui -o ...  .):
#   /tmp/minfer-main  from `git archive 2cf4672`
#   /tmp/minfer-br    from branch cpuq6k
# Models (not in the repository):
#   /tmp/minfer-main synth --preset 1b --type T -o /tmp/s8models/synth-1b-T.gguf
#   for T in Q4_K_M Q4_0 Q8_0
set -u
OUT=${OUT:-bench/results/2026-12-01-s8-cpuq6k/raw}
LB=../shared/tools/llama.cpp/llama-bench
mkdir -p "$OUT"
for T in ${TYPES:-Q4_K_M Q4_0 Q8_0}; do
	M=/tmp/s8models/synth-1b-$T.gguf
	order="main br llama"
	for round in 1 2 3; do
		for who in $order; do
			f=$OUT/$T-r$round-$who
			date -u +%FT%TZ >"$f.time"
			case $who in
			main) /tmp/minfer-main bench -m "$M" -p 128 -n 64 -t 2 --json >"$f.json" 2>"$f.err" ;;
			br) /tmp/minfer-br bench -m "$M" -p 128 -n 64 -t 2 --json >"$f.json" 2>"$f.err" ;;
			llama) $LB -m "$M" -p 128 -n 64 -t 2 -o json >"$f.json" 2>"$f.err" ;;
			esac
			echo "rc=$?" >>"$f.time"
			date -u +%FT%TZ >>"$f.time"
		done
		order=$(echo $order | awk '{print $2, $3, $1}')
	done
done
