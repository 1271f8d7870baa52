#!/bin/bash
# Session 5, call 1 (issue 11): programmatic dependent launch (decode.sm90.ptx) on the H200: CUDA op tests
# and GPU model tests with it on (the default on compute 9.0), then decode benches with it on and off
# (MINFER_CUDA_PDL=0 loads the compute_80 decode.ptx, launches without the attribute), alternating,
# then the op tests again with it off (the compute_80 build since e721278 had not run on a GPU).
R=$PWD; D=$R/.device/s5a; L=/tmp/L; mkdir -p $L
(cd $D && gunzip -f *.gz; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core/backend/cuda && timeout 150 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op-pdl.txt 2>&1; echo "cuda.test (pdl on) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op-pdl.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op-pdl.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op-pdl.txt | head -25 | tee -a $S
(cd core && MINFER_TESTDATA=$D/td timeout 150 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu-pdl.txt 2>&1; echo "core.test GPU (pdl on) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu-pdl.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu-pdl.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu-pdl.txt) cases=$(grep -c 'logits differ' $L/core-gpu-pdl.txt) nonzero=$(grep -cE ': [1-9][0-9]* of [0-9]+ logits differ' $L/core-gpu-pdl.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu-pdl.txt | head -25 | tee -a $S
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
timeout 40 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf 2>&1 | tail -1 | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 60 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "prefill|decode|device|rc=|rror" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn MINFER_CUDA_PDL=1 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
  bn MINFER_CUDA_PDL=0 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
  bn MINFER_CUDA_PDL=1 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 128 -r 3 --gpu-layers 5
  bn MINFER_CUDA_PDL=0 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 128 -r 3 --gpu-layers 5
done
(cd core/backend/cuda && MINFER_CUDA_PDL=0 timeout 120 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op-nopdl.txt 2>&1; echo "cuda.test (pdl off) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op-nopdl.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op-nopdl.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op-nopdl.txt | head -10 | tee -a $S
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
