#!/bin/sh
# The CPU's weights copied into huge-page anonymous memory (--cpu-weights auto, the default, copies
# these 1B models) against weights used in place from the file's mapping (--cpu-weights map), with
# llama.cpp's llama-bench beside them: the same binary, the same synth files, 2 threads, pp128 / tg64,
# three alternating rounds per type (the order rotates). Run from the repository root.
#   go build -o /tmp/minfer-final .   (the commit that adds --cpu-weights)
# (raw-env/: the first run, of the experiment build where MINFER_CPU_WEIGHTS=copy switched copying on
# and mapping was the default: `map` ran plain, `copy` ran with the variable set.)
#   models: minfer synth --preset 1b --type T -o /tmp/s8models/synth-1b-T.gguf
set -u
OUT=${OUT:-bench/results/2026-12-01-s8-cpucopy/raw}
MB=${MB:-/tmp/minfer-final}
LB=../shared/tools/llama.cpp/llama-bench
mkdir -p "$OUT"
for T in ${TYPES:-Q4_0 Q8_0 Q4_K_M}; do
	M=/tmp/s8models/synth-1b-$T.gguf
	order="map copy llama"
	for round in 1 2 3; do
		for who in $order; do
			f=$OUT/$T-r$round-$who
			date -u +%FT%TZ >"$f.time"
			case $who in
			map) $MB bench -m "$M" -p 128 -n 64 -t 2 --cpu-weights map --json >"$f.json" 2>"$f.err" ;;
			copy) $MB bench -m "$M" -p 128 -n 64 -t 2 --json >"$f.json" 2>"$f.err" ;;
			llama) $LB -m "$M" -p 128 -n 64 -t 2 -o json >"$f.json" 2>"$f.err" ;;
			esac
			echo "rc=$?" >>"$f.time"
			date -u +%FT%TZ >>"$f.time"
		done
		order=$(echo $order | awk '{print $2, $3, $1}')
	done
done
