#!/bin/bash
# Session 11, H200 call 6 (issue 11): mvs_q4_k_2 (two Q4_K rows a warp) in blocks of 4 warps (the one-row
# kernel's shared memory a block) — decode A/B on the 8B-shaped 4-block model against minfer-base (HEAD),
# BenchmarkMatVec Q4_K, then all CUDA op tests and the GPU model tests. Carry .device/s11f. Logs: $OUT.
R=$PWD; D=$R/.device/s11f; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz; do dx $f; done; chmod +x cuda.test core.test minfer minfer-base)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(timeout 100 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf > $L/synth.txt 2>&1; echo "synth rc=$?" >> $L/synth.txt) &
SP=$!
(cd core/backend/cuda && timeout 60 $D/cuda.test -test.run XXX -test.bench 'BenchmarkMatVec/Q4_K/4096/staged' -test.benchtime 300x > $OUT/bench-matvec.txt 2>&1; echo "bench rc=$? ${SECONDS}s" | tee -a $S)
grep -E "^Benchmark" $OUT/bench-matvec.txt | tee -a $S
wait $SP; grep rc= $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 60 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^decode|step|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  for m in minfer minfer-base; do bn X=$m $D/$m bench -m /tmp/8b4.gguf -p 512 -n 128 -r 3 --gpu-layers 5; done
done
(cd core/backend/cuda && timeout 200 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources|TestPDLPTXAssembles' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt) cases=$(grep -c 'logits differ' $L/core-gpu.txt) nonzero=$(grep -cE ': [1-9][0-9]* of [0-9]+ logits differ' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -25 | tee -a $S
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
