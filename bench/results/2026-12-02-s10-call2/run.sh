#!/bin/bash
# Session 10, H200 call 2 (issue 11): programmatic dependent launch with the mat-vecs' weights copied before the wait — all CUDA op tests and GPU
# model tests with it on (the default on the H200), the attention op tests with it off (MINFER_CUDA_PDL=0;
# they also check cf05a32's shared softmax helper, first run on a GPU here), then decode/prefill benches of
# the 1.1B Q4_0 and 8B Q4_K synth models alternating PDL on / off. Logs: $OUT.
R=$PWD; D=$R/.device/s10b; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz synth/*.xz; do dx $f; done; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "prefill|decode|device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
bn MINFER_CUDA_PDL=1 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 2 --gpu-layers 23
(cd core/backend/cuda && timeout 240 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources|TestPDLPTXAssembles' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
(cd core/backend/cuda && MINFER_CUDA_PDL=0 timeout 100 $D/cuda.test -test.v -test.count=1 -test.run 'Attention|Attn|Split|MatVec|Staged|Piped' > $L/cuda-attn-nopdl.txt 2>&1; echo "cuda.test attention PDL=0 rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-attn-nopdl.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-attn-nopdl.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-attn-nopdl.txt | head -20 | tee -a $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done; ln -sfn $D/synth $D/td/synth
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt) cases=$(grep -c 'logits differ' $L/core-gpu.txt) nonzero=$(grep -cE ': [1-9][0-9]* of [0-9]+ logits differ' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -25 | tee -a $S
t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > /dev/null 2>&1; echo "synth 8b rc=$? $((SECONDS-t0))s" | tee -a $S
for round in 1 2; do
  for p in 1 0; do
    bn MINFER_CUDA_PDL=$p $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 33
    bn MINFER_CUDA_PDL=$p $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
  done
done
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
