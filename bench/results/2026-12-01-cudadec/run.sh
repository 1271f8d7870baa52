#!/bin/bash
# cudadec device call: op tests, GPU model tests, minfer synth + bench.
# Run from the repository root; logs under $OUT. STAGE=final adds the 8B.
R=$PWD
D=$R/.device/cudadec
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x minfer core.test cuda.test)
for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
export MINFER_TESTDATA=$D/td
nvidia-smi --query-gpu=name,memory.free,memory.total,driver_version --format=csv > $OUT/nvidia-smi.txt
if [ "${SKIPTESTS:-0}" != 1 ]; then
(cd core/backend/cuda && timeout ${OPT:-150} $D/cuda.test -test.v -test.count=1 -test.skip 'TestPTXMatchesSources|NoDriver' > $OUT/cuda-op-test.txt 2>&1; echo "cuda.test rc=$?")
grep -cE -- "--- PASS" $OUT/cuda-op-test.txt; grep -E -- "--- FAIL|panic" $OUT/cuda-op-test.txt | head -40
(cd core && timeout ${CT:-200} $D/core.test -test.v -test.count=1 -test.run 'GPU' > $OUT/core-gpu-test.txt 2>&1; echo "core.test rc=$?")
grep -cE -- "--- PASS" $OUT/core-gpu-test.txt; grep -E -- "--- FAIL|panic|graph runs" $OUT/core-gpu-test.txt | head -40
if grep -q -- "--- FAIL" $OUT/core-gpu-test.txt; then
  for off in all attn mv quant,addnorm rope,store; do
    echo "## MINFER_CUDA_DECODE=$off" >> $OUT/diag.txt
    (cd core && MINFER_CUDA_DECODE=$off timeout 60 $D/core.test -test.v -test.count=1 -test.run 'GPULogits' 2>&1 | grep -E "^    --- FAIL|NMSE vs the CPU" | head -20 >> $OUT/diag.txt)
  done
fi
fi
B=$OUT/bench.txt
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $B
t0=$(date +%s); timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b-q4_0.gguf >> $B 2>&1; echo "synth 1b: rc=$? $(( $(date +%s)-t0 )) s" >> $B
echo "## minfer bench -m 1b-q4_0.gguf -p 512 -n 128 --gpu-layers 23" >> $B
timeout 90 $D/minfer bench -m /tmp/1b-q4_0.gguf -p 512 -n 128 --gpu-layers 23 >> $B 2>&1
if [ "${PROF:-0}" = 1 ] && command -v ncu >/dev/null; then
  P=$OUT/ncu-decode.txt
  echo "## MINFER_CUDA_GRAPHS=0 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 1500 --launch-count 400 minfer bench -m 1b-q4_0.gguf -p 16 -n 6 --gpu-layers 23" > $P
  MINFER_CUDA_GRAPHS=0 timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 1500 --launch-count 400 $D/minfer bench -m /tmp/1b-q4_0.gguf -p 16 -n 6 --gpu-layers 23 >> $P 2>&1
  echo "ncu rc=$?" >> $P
fi
if [ "${STAGE:-}" = final ]; then
  t0=$(date +%s); timeout 150 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b-q4_k.gguf >> $B 2>&1; echo "synth 8b: rc=$? $(( $(date +%s)-t0 )) s" >> $B
  if [ -s /tmp/8b-q4_k.gguf ]; then
    echo "## minfer bench -m 8b-q4_k.gguf -p 512 -n 128 --gpu-layers 33" >> $B
    timeout 100 $D/minfer bench -m /tmp/8b-q4_k.gguf -p 512 -n 128 --gpu-layers 33 >> $B 2>&1
  fi
fi
cat $B
