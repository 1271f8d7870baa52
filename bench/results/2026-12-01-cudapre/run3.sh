#!/bin/bash
# Device call 3 (helper cudapre): the batched-prefill model test with the
# tensor-core mat-muls and flash attention each on and off, to place the
# GPU-vs-CPU logit differences of the quantized small/ models.
R=$PWD
D=$R/.device/cudapre
(cd $D && gunzip -f core.test.gz && chmod +x core.test)
export MINFER_TESTDATA=$R/testdata
cd core
for v in "" "MINFER_CUDA_MMQ=0" "MINFER_CUDA_FATTN=0" "MINFER_CUDA_MMQ=0 MINFER_CUDA_FATTN=0"; do
  echo "## ${v:-default}" | tee -a $OUT/prefill-test.txt
  env $v timeout 40 $D/core.test -test.v -test.count=1 -test.run 'TestGPUPrefillMatchesCPU' 2>&1 | grep -E "^=== RUN|positions|FAIL|ok|panic" >> $OUT/prefill-test.txt
done
cat $OUT/prefill-test.txt
