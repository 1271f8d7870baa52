#!/bin/bash
# One device call: op tests, model tests, then benchmarks of minfer synth
# models (1.1B Q4_0 all blocks / half the blocks, 8B-shaped Q4_K if the
# synthesis finishes in time). Logs under $OUT.
cd "$(dirname "$0")"
for f in *.gz; do gunzip -f "$f"; done
chmod +x core.test cuda.test minfer
export MINFER_TESTDATA=$PWD/td
nvidia-smi --query-gpu=name,memory.free,memory.total,driver_version --format=csv > $OUT/nvidia-smi.txt
./minfer devices > $OUT/devices.txt 2>&1
./cuda.test -test.v -test.count=1 -test.skip 'PTX|NoDriver' > $OUT/cuda-test.txt 2>&1; echo "cuda.test rc=$?"
grep -E "^\s*--- FAIL|panic" $OUT/cuda-test.txt | head -20
./core.test -test.v -test.count=1 -test.run 'GPU' > $OUT/core-gpu-test.txt 2>&1; echo "core.test rc=$?"
grep -E "^\s*--- FAIL|panic|graph runs" $OUT/core-gpu-test.txt | head -20
B=$OUT/bench.txt
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $B
t0=$(date +%s); timeout 120 ./minfer synth --preset 1b --type Q4_0 -o /tmp/1b-q4_0.gguf >> $B 2>&1; echo "synth 1b: $(( $(date +%s)-t0 )) s" >> $B
for gl in 23 11; do
  echo "## minfer bench -m 1b-q4_0.gguf -p 512 -n 128 --gpu-layers $gl" >> $B
  timeout 120 ./minfer bench -m /tmp/1b-q4_0.gguf -p 512 -n 128 --gpu-layers $gl >> $B 2>&1
done
echo "## MINFER_CUDA_GRAPHS=0 minfer bench -m 1b-q4_0.gguf -p 512 -n 128 --gpu-layers 23" >> $B
MINFER_CUDA_GRAPHS=0 timeout 120 ./minfer bench -m /tmp/1b-q4_0.gguf -p 512 -n 128 --gpu-layers 23 >> $B 2>&1
t0=$(date +%s); timeout 240 ./minfer synth --preset 8b --type Q4_K -o /tmp/8b-q4_k.gguf >> $B 2>&1; echo "synth 8b: rc=$? $(( $(date +%s)-t0 )) s" >> $B
if [ -s /tmp/8b-q4_k.gguf ]; then
  for gl in 33 16; do
    echo "## minfer bench -m 8b-q4_k.gguf -p 512 -n 128 --gpu-layers $gl" >> $B
    timeout 150 ./minfer bench -m /tmp/8b-q4_k.gguf -p 512 -n 128 --gpu-layers $gl >> $B 2>&1
  done
fi
cat $B
