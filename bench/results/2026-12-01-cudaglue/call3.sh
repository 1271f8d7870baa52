#!/bin/bash
# cudaglue device call 3 (final): GPU model tests with the fused device forms; 1.1B Q4_0 bench: all / half / CPU-only,
# fused forms on/off, pool-yield change (minfer-old = call-1 build, before it and before the fused forms).
D=$(cd "$(dirname "$0")" && pwd)
(cd $D && gunzip -f *.gz && chmod +x minfer minfer-old core.test)
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $OUT/bench.txt
(cd core && timeout 75 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $OUT/core-gpu-test.txt 2>&1; echo "core.test rc=$?")
grep -cE -- "--- PASS" $OUT/core-gpu-test.txt; grep -E -- "--- FAIL|panic|^(ok|PASS|FAIL)" $OUT/core-gpu-test.txt | head -20
B=$OUT/bench.txt
$D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $B 2>&1
b() { echo "## $*" >> $B; timeout 30 "$@" >> $B 2>&1; echo "rc=$?" >> $B; }
M="-m /tmp/1b.gguf -p 512 -n 128"
b $D/minfer bench $M --gpu-layers 23
MINFER_DEVICE_FUSION=0 b $D/minfer bench $M --gpu-layers 23
b $D/minfer bench $M --gpu-layers 11
MINFER_DEVICE_FUSION=0 b $D/minfer bench $M --gpu-layers 11
b $D/minfer-old bench $M --gpu-layers 11
b $D/minfer bench $M --gpu-layers 0
b $D/minfer-old bench $M --gpu-layers 0
b $D/minfer run -m /tmp/1b.gguf -p "Once upon a time" -n 32 --temp 0 --stats --gpu-layers 23
b $D/minfer run -m /tmp/1b.gguf -p "Once upon a time" -n 32 --temp 0 --stats --gpu-layers 11
cat $B
