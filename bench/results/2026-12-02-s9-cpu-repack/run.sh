#!/bin/sh
# Q4_0 x8 repack (copied weights) against the branch's base, with llama.cpp's llama-bench beside
# them: the same synth files, 2 threads, pp128 / tg64, alternating rounds per type (the order
# rotates). Run from the repository root.
#   base: git archive 6d934e9 | tar -x -C /tmp/base-src && (cd /tmp/base-src && go build -o /tmp/minfer-base .)
#   x:    go build -o /tmp/minfer-x .   (this branch)
#   models: /tmp/minfer-x synth --preset 1b --type T -o /tmp/h/1b-t.gguf  (t: T in lower case)
set -u
OUT=${OUT:-bench/results/2026-12-02-s9-cpu-repack/raw}
LB=../shared/tools/llama.cpp/llama-bench
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
for T in ${TYPES:-Q4_0 Q8_0 Q4_K_M}; do
	M=/tmp/h/1b-$(echo $T | tr A-Z a-z).gguf
	order=${ORDER:-"base x llama"}
	round=1
	while [ $round -le $ROUNDS ]; do
		for who in $order; do
			f=$OUT/$T-r$round-$who
			date -u +%FT%TZ >"$f.time"
			case $who in
			llama) $LB -m "$M" -p 128 -n 64 -t 2 -o json >"$f.json" 2>"$f.err" ;;
			*) /tmp/minfer-$who bench -m "$M" -p 128 -n 64 -t 2 --json >"$f.json" 2>"$f.err" ;;
			esac
			echo "rc=$?" >>"$f.time"
			date -u +%FT%TZ >>"$f.time"
		done
		order=$(echo $order | awk '{for (i = 2; i <= NF; i++) printf "%s ", $i; print $1}')
		round=$((round + 1))
	done
done
