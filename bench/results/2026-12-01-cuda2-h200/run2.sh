#!/bin/bash
# Device call 2: op + model tests, the 1.1B bench, and an nsys profile of it.
R=$PWD
D=$R/.device/cuda2
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x minfer core.test cuda.test)
export MINFER_TESTDATA=$D/td
(cd core/backend/cuda && timeout 120 $D/cuda.test -test.v -test.count=1 -test.skip 'TestPTXMatchesSources|NoDriver' > $OUT/cuda-op-test.txt 2>&1; echo "cuda.test rc=$?")
grep -cE -- "--- PASS" $OUT/cuda-op-test.txt; grep -E -- "--- FAIL|panic" $OUT/cuda-op-test.txt | head -30
(cd core && timeout 150 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $OUT/core-gpu-test.txt 2>&1; echo "core.test rc=$?")
grep -cE -- "--- PASS" $OUT/core-gpu-test.txt; grep -E -- "--- FAIL|panic|graph runs" $OUT/core-gpu-test.txt | head -30
B=$OUT/bench.txt
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $B
timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b-q4_0.gguf >> $B 2>&1
echo "## minfer bench -m 1b-q4_0.gguf -p 512 -n 128 --gpu-layers 23" >> $B
timeout 60 $D/minfer bench -m /tmp/1b-q4_0.gguf -p 512 -n 128 --gpu-layers 23 >> $B 2>&1
cat $B
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys: $NSYS"
if [ -n "$NSYS" ]; then
  timeout 120 $NSYS profile --cuda-graph-trace=node -t cuda -o /tmp/p --force-overwrite true $D/minfer bench -m /tmp/1b-q4_0.gguf -p 512 -n 64 --gpu-layers 23 > $OUT/profile-run.txt 2>&1
  timeout 60 $NSYS stats -r cuda_gpu_kern_sum,cuda_api_sum /tmp/p.nsys-rep > $OUT/profile.txt 2>&1
  head -60 $OUT/profile.txt
fi
