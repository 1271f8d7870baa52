#!/bin/bash
# cudamv device call (issue 11, staged mat-vecs): the cuda op tests (both
# mat-vec families), the mat-vec kernel benchmark (staged vs v1), then
# minfer synth 1b Q4_0 and minfer bench with the staged default and with
# MINFER_CUDA_MV=v1. Run from the repository root with .device/cudamv
# carried; logs under $OUT. About 100 s.
R=$PWD
D=$R/.device/cudamv
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x minfer cuda.test)
nvidia-smi --query-gpu=name,memory.free,memory.total,driver_version --format=csv > $OUT/nvidia-smi.txt 2>&1
(cd core/backend/cuda && timeout 65 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $OUT/cuda-op-test.txt 2>&1; echo "cuda.test rc=$?" | tee -a $OUT/cuda-op-test.txt)
echo "subtests passed: $(grep -cE -- '--- PASS' $OUT/cuda-op-test.txt)"
grep -E -- "--- FAIL|panic" $OUT/cuda-op-test.txt | head -30
echo "outputs differing from the CPU's bits (lines with a nonzero count):"
grep -E "outputs, [1-9][0-9]* differ" $OUT/cuda-op-test.txt | head -10
(cd core/backend/cuda && timeout 20 $D/cuda.test -test.run '^$' -test.bench MatVec -test.benchtime 200x > $OUT/matvec-bench.txt 2>&1; echo "bench rc=$?" >> $OUT/matvec-bench.txt)
grep -E "^Benchmark|rc=" $OUT/matvec-bench.txt
B=$OUT/bench.txt
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $B
t0=$(date +%s); timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b-q4_0.gguf >> $B 2>&1; echo "synth 1b: rc=$? $(( $(date +%s)-t0 )) s" >> $B
echo "## minfer bench -m 1b-q4_0.gguf -p 64 -n 128 --gpu-layers 99 (staged mat-vecs, the default)" >> $B
timeout 25 $D/minfer bench -m /tmp/1b-q4_0.gguf -p 64 -n 128 --gpu-layers 99 >> $B 2>&1; echo "rc=$?" >> $B
echo "## MINFER_CUDA_MV=v1 minfer bench -m 1b-q4_0.gguf -p 64 -n 128 --gpu-layers 99" >> $B
MINFER_CUDA_MV=v1 timeout 25 $D/minfer bench -m /tmp/1b-q4_0.gguf -p 64 -n 128 --gpu-layers 99 >> $B 2>&1; echo "rc=$?" >> $B
cat $B
