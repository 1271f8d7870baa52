#!/bin/bash
# Session 9, H200 call 2 (issue 11): the attention q8_K tests (fixed: the mat-mul reads the attention node)
# and the busy timer test; then 8B and 1.1B decode with the step phase timing (where a decode step's wall
# time goes on the host) beside the device busy time. Logs: $OUT.
R=$PWD; D=$R/.device/s9b; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz; do dx $f; done; chmod +x cuda.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(cd core/backend/cuda && timeout 120 $D/cuda.test -test.v -test.count=1 -test.run 'TestAttentionQuantizesQ8K|TestSplitAttentionValues|TestBusyTiming' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:|launched|no attn" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "^--- |^    --- " $L/cuda-op.txt | head -20 | tee -a $S
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > /dev/null 2>&1; echo "synth 8b rc=$? $((SECONDS-t0))s" | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "prefill|decode|device|rc=|rror" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn X=8b $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 33
  bn X=1b $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
done
bn X=8b-json $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 33 --json
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
