#!/bin/sh
# s9's run.sh (bench/results/2026-12-02-s9-cpu-repack/run.sh), copied as is; only this header and
# OUT's default differ. Grouped decode attention (branch cpu-gqa) against main, with llama.cpp's
# llama-bench beside them: the same synth files, 2 threads, pp128 / tg64, alternating rounds per type
# (the order rotates). Run from the repository root:
#   TYPES="Q4_0 Q4_K_M Q8_0" ROUNDS=5 ORDER="gqa base baseA llama" OUT=... sh THIS
#   base:  main at 79a0916: CGO_ENABLED=0 go build -tags nogui -o /tmp/minfer-base .
#   baseA: 79a0916 plus the six PCALIGN lines of c74b644 and dbf7e10 (git archive 79a0916 | tar -x,
#          patch with git diff 79a0916..dbf7e10 -- the three *_avx512_amd64.s files), built the same way
#   gqa:   this branch at dbf7e10, built the same way
#   models: /tmp/minfer-base synth --preset 1b --type T -o /tmp/h/1b-t.gguf  (t: T in lower case)
set -u
OUT=${OUT:-bench/results/2026-12-02-s10-cpu-gqa/raw}
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
