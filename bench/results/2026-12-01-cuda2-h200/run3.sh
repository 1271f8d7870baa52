#!/bin/bash
# Device call 3 (final): op + model tests, then minfer synth + minfer bench
# (1.1B Q4_0 all blocks / half / graphs off; 8B-shaped Q4_K all / 16 of 32).
R=$PWD
D=$R/.device/cuda2
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x minfer core.test cuda.test)
export MINFER_TESTDATA=$D/td
nvidia-smi --query-gpu=name,memory.free,memory.total,driver_version --format=csv > $OUT/nvidia-smi.txt
$D/minfer devices > $OUT/minfer-devices.txt 2>&1
(cd core/backend/cuda && timeout 120 $D/cuda.test -test.v -test.count=1 -test.skip 'TestPTXMatchesSources|NoDriver' > $OUT/cuda-op-test.txt 2>&1; echo "cuda.test rc=$?")
grep -cE -- "--- PASS" $OUT/cuda-op-test.txt; grep -E -- "--- FAIL|panic" $OUT/cuda-op-test.txt | head -30
(cd core && timeout 150 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $OUT/core-gpu-test.txt 2>&1; echo "core.test rc=$?")
grep -cE -- "--- PASS" $OUT/core-gpu-test.txt; grep -E -- "--- FAIL|panic|graph runs" $OUT/core-gpu-test.txt | head -30
B=$OUT/bench.txt
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $B
t0=$(date +%s); timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b-q4_0.gguf >> $B 2>&1; echo "synth 1b: rc=$? $(( $(date +%s)-t0 )) s" >> $B
for gl in 23 11; do
  echo "## minfer bench -m 1b-q4_0.gguf -p 512 -n 128 --gpu-layers $gl" >> $B
  timeout 90 $D/minfer bench -m /tmp/1b-q4_0.gguf -p 512 -n 128 --gpu-layers $gl >> $B 2>&1
done
echo "## MINFER_CUDA_GRAPHS=0 minfer bench -m 1b-q4_0.gguf -p 512 -n 128 --gpu-layers 23" >> $B
MINFER_CUDA_GRAPHS=0 timeout 60 $D/minfer bench -m /tmp/1b-q4_0.gguf -p 512 -n 128 --gpu-layers 23 >> $B 2>&1
t0=$(date +%s); timeout 150 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b-q4_k.gguf >> $B 2>&1; echo "synth 8b: rc=$? $(( $(date +%s)-t0 )) s" >> $B
if [ -s /tmp/8b-q4_k.gguf ]; then
  echo "## minfer bench -m 8b-q4_k.gguf -p 512 -n 128 --gpu-layers 33" >> $B
  timeout 100 $D/minfer bench -m /tmp/8b-q4_k.gguf -p 512 -n 128 --gpu-layers 33 >> $B 2>&1
  echo "## minfer bench -m 8b-q4_k.gguf -p 64 -n 16 --gpu-layers 16" >> $B
  timeout 100 $D/minfer bench -m /tmp/8b-q4_k.gguf -p 64 -n 16 --gpu-layers 16 >> $B 2>&1
fi
cat $B
