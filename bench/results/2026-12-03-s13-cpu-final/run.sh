#!/bin/sh
# Session 13 final side-by-side (issue 12): main ab1c242 ("final") against 3462c04 ("base", the
# session's start) and llama.cpp's llama-bench, the same synth files, 2 threads, pp128 / tg64, alternating
# rounds per type (the order rotates). Run from the repository root:
#   TYPES="Q4_0 Q8_0 Q4_K_M" ROUNDS=4 ORDER="final base llama" OUT=bench/results/2026-12-03-s13-cpu-final/raw sh THIS
#   final: CGO_ENABLED=0 go build -tags nogui -o /tmp/minfer-final . (see README.md for the commit)
#   base:  the same build of 3462c04 (the session start; CPU code of 2272ff3)
#   models: /tmp/minfer-base synth --preset 1b --type T -o /tmp/h/1b-t.gguf  (t: T in lower case)
set -u
OUT=${OUT:-bench/results/2026-12-03-s13-cpu-final/raw}
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
