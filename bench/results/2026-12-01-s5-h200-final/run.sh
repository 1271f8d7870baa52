#!/bin/bash
# Session 5, final call (issue 11) on main: GPU model tests over testdata (models/, small/, arch/) plus
# ../shared/testdata/synth's Q4_0 model (carried; last session's carried the Q4_K_M one), then the GPU
# benches: 1.1B Q4_0 all blocks + output, 8B Q4_K all blocks + output and 16 of 32. Logs: $OUT.
R=$PWD; D=$R/.device/s5f; L=/tmp/L; mkdir -p $L
(cd $D && for f in *.gz synth/*.gguf.gz; do gunzip -f "$f"; done; chmod +x core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done; ln -sfn $D/synth $D/td/synth
ls $D/td/synth | tee -a $S
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt) cases=$(grep -c 'logits differ' $L/core-gpu.txt) nonzero=$(grep -cE ': [1-9][0-9]* of [0-9]+ logits differ' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -25 | tee -a $S
grep -E "synth-llama-Q4_0" $L/core-gpu.txt | head -12 | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "prefill|decode|device|rc=" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > /dev/null 2>&1; echo "synth 8b rc=$? $((SECONDS-t0))s" | tee -a $S
bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 33
bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 1 --gpu-layers 16
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
