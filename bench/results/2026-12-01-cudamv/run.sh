#!/bin/bash
# cudamv device call (issue 11): the cuda op tests (new and v1 kernel
# families), minfer synth 1b Q4_0 and minfer bench with the new kernels
# (the default) and the v1 ones (MINFER_CUDA_MV=v1 MINFER_CUDA_DECODE=one),
# the mat-vec kernel benchmark (staged vs v1), then the GPU model tests in
# the time left (logits of every test model vs the CPU, bit-exact bound).
# Run from the repository root with .device/cudamv carried; logs under
# $OUT. At most about 118 s.
R=$PWD
D=$R/.device/cudamv
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x minfer cuda.test core.test)
nvidia-smi --query-gpu=name,memory.free,memory.total,driver_version --format=csv > $OUT/nvidia-smi.txt 2>&1
(cd core/backend/cuda && timeout 60 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $OUT/cuda-op-test.txt 2>&1; echo "cuda.test rc=$?" | tee -a $OUT/cuda-op-test.txt)
echo "subtests passed: $(grep -cE -- '--- PASS' $OUT/cuda-op-test.txt), failed: $(grep -cE -- '--- FAIL' $OUT/cuda-op-test.txt)"
grep -E -- "--- FAIL|panic" $OUT/cuda-op-test.txt | head -30
echo "outputs differing from the CPU's bits (first lines with a nonzero count):"
grep -E "outputs, [1-9][0-9]* differ" $OUT/cuda-op-test.txt | head -10
B=$OUT/bench.txt
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $B
t0=$(date +%s); timeout 20 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b-q4_0.gguf >> $B 2>&1; echo "synth 1b: rc=$? $(( $(date +%s)-t0 )) s" >> $B
echo "## minfer bench -m 1b-q4_0.gguf -p 64 -n 128 --gpu-layers 99 (new kernels, the default)" >> $B
timeout 15 $D/minfer bench -m /tmp/1b-q4_0.gguf -p 64 -n 128 --gpu-layers 99 >> $B 2>&1; echo "rc=$?" >> $B
echo "## MINFER_CUDA_MV=v1 MINFER_CUDA_DECODE=one minfer bench -m 1b-q4_0.gguf -p 64 -n 128 --gpu-layers 99 (v1 kernels)" >> $B
MINFER_CUDA_MV=v1 MINFER_CUDA_DECODE=one timeout 15 $D/minfer bench -m /tmp/1b-q4_0.gguf -p 64 -n 128 --gpu-layers 99 >> $B 2>&1; echo "rc=$?" >> $B
cat $B
(cd core/backend/cuda && timeout 12 $D/cuda.test -test.run '^$' -test.bench MatVec -test.benchtime 200x > $OUT/matvec-bench.txt 2>&1; echo "bench rc=$?" >> $OUT/matvec-bench.txt)
grep -E "^Benchmark|rc=" $OUT/matvec-bench.txt
left=$(( 116 - SECONDS ))
if [ $left -gt 10 ]; then
  mkdir -p $D/td/synth
  for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
  (cd core && MINFER_TESTDATA=$D/td timeout $left $D/core.test -test.v -test.count=1 -test.run 'GPU' > $OUT/core-gpu-test.txt 2>&1; echo "core.test rc=$? (timeout ${left}s)" | tee -a $OUT/core-gpu-test.txt)
  echo "model tests passed: $(grep -cE -- '--- PASS' $OUT/core-gpu-test.txt)"; grep -E -- "--- FAIL|panic" $OUT/core-gpu-test.txt | head -20
fi
echo "total ${SECONDS}s"
