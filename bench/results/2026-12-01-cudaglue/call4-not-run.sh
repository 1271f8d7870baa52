#!/bin/bash
# cudaglue, NOT RUN by the helper (its device quota was spent): the merged branch (dfcb064: fused device forms
# + main's cudadec decode kernels and cudapre tensor-core mat-muls) — GPU model tests, and the 1.1B bench with
# the fused forms on and off. Run: bash .device/cudaglue/call4.sh, carry .device/cudaglue.
D=$(cd "$(dirname "$0")" && pwd)
(cd $D && gunzip -f *.gz && chmod +x minfer core.test)
(cd core && timeout 90 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $OUT/core-gpu-test.txt 2>&1; echo "core.test rc=$?")
grep -cE -- "--- PASS" $OUT/core-gpu-test.txt; grep -E -- "--- FAIL|panic|^(ok|PASS|FAIL)" $OUT/core-gpu-test.txt | head -20
B=$OUT/bench.txt; echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $B
$D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $B 2>&1
b() { echo "## $*" >> $B; timeout 30 "$@" >> $B 2>&1; echo "rc=$?" >> $B; }
M="-m /tmp/1b.gguf -p 512 -n 128"
b $D/minfer bench $M --gpu-layers 23
MINFER_DEVICE_FUSION=0 b $D/minfer bench $M --gpu-layers 23
b $D/minfer bench $M --gpu-layers 11
cat $B
