#!/bin/sh
# Session 20 side-by-side (issue 12): main (/tmp/minfer-main) against llama.cpp's llama-bench, the same synth files,
# 2 threads, pp128 / tg64, alternating rounds per type (the order rotates; session 13's script). From the repository root:
#   TYPES="Q4_0 Q8_0 Q4_K_M" ROUNDS=3 ORDER="main llama" sh bench/results/2026-12-07-s20-cpu/sbs.sh
#   main: CGO_ENABLED=0 go build -tags nogui -o /tmp/minfer-main . (the commit in README.md)
#   models: /tmp/minfer-main synth --preset 1b --type T -o /tmp/h/1b-t.gguf  (t: T in lower case)
set -u
OUT=${OUT:-bench/results/2026-12-07-s20-cpu/sbs}
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
