#!/bin/bash
# Final device call of session 3 (issue 11): the merged main's op tests, GPU
# model tests (fallback switch sets only where the default fails), the 1.1B
# and 8B benches (all blocks, half), the mat-vec kernel benchmark, the CPU
# twin tests on this host's CPU. Run from the repository root with
# .device/final and .device/cpuasm carried. Logs: $OUT/summary.txt,
# $OUT/bench.txt, $OUT/logs.tgz (every raw log).
R=$PWD; D=$R/.device/final; L=/tmp/L; mkdir -p $L
S=$OUT/summary.txt; B=$OUT/bench.txt
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x minfer cuda.test core.test)
echo "# built from $(cat $D/BUILT_FROM); $(date -u); $(nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader)" | tee $S
mkdir -p $D/td/synth; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
ops() { # $1 = label, rest = env
  local lab=$1; shift
  (cd core/backend/cuda && env "$@" timeout 100 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op-$lab.txt 2>&1; echo "cuda.test[$lab] rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op-$lab.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op-$lab.txt)" | tee -a $S)
  grep -E -- "--- FAIL|panic:" $L/cuda-op-$lab.txt | head -25 | tee -a $S
  grep -E " [1-9][0-9]* differ" $L/cuda-op-$lab.txt | head -8 | tee -a $S
}
model() {
  local lab=$1; shift
  (cd core && env MINFER_TESTDATA=$D/td "$@" timeout ${MT:-100} $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu-$lab.txt 2>&1; echo "core.test[$lab] rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu-$lab.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu-$lab.txt)" | tee -a $S)
  grep -E -- "--- FAIL|panic:|worst-position|> 1e" $L/core-gpu-$lab.txt | head -25 | tee -a $S
}
ops default X=1
model default X=1
if grep -q -- "--- FAIL\|panic:" $L/cuda-op-default.txt $L/core-gpu-default.txt; then
  MT=60; model mvv1 MINFER_CUDA_MV=v1 MINFER_CUDA_DECODE=one,normmv
  model nofattn MINFER_CUDA_FATTN=0
  model nommq MINFER_CUDA_MMQ=0
  model safe MINFER_CUDA_MV=v1 MINFER_CUDA_DECODE=one,normmv MINFER_CUDA_FATTN=0 MINFER_CUDA_MMQ=0
fi
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $B
bn() { echo "## $*" >> $B; timeout 60 "$@" >> $B 2>&1; echo "rc=$? ${SECONDS}s" >> $B; }
t0=$SECONDS; timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $B 2>&1; echo "synth 1b rc=$? $((SECONDS-t0))s" >> $B
bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
bn env MINFER_CUDA_MV=v1 MINFER_CUDA_DECODE=one,normmv $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
bn env MINFER_CUDA_FATTN=0 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 32 -r 2 --gpu-layers 23
bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 2 --gpu-layers 11
cat $B >> $S
(cd core/backend/cuda && timeout 15 $D/cuda.test -test.run '^$' -test.bench MatVec -test.benchtime 200x > $L/matvec-bench.txt 2>&1); grep -E "^Benchmark" $L/matvec-bench.txt | tee -a $S
t0=$SECONDS; timeout 130 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf >> $B 2>&1; echo "synth 8b rc=$? $((SECONDS-t0))s" >> $B
if [ -s /tmp/8b.gguf ]; then
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 33
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 1 --gpu-layers 16
fi
tail -n 30 $B >> $S
if [ $SECONDS -lt 470 ]; then (cd $R && timeout 60 bash .device/cpuasm/run.sh > $L/cpuasm.txt 2>&1; echo "cpuasm rc=$?" | tee -a $S; grep -E "^(ok|PASS|FAIL|--- FAIL)|avx|model name" $L/cpuasm.txt | head | tee -a $S); fi
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
