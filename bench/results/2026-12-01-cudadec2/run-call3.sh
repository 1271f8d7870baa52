#!/bin/bash
# cudadec2 device call 3 (final): op tests (default, and the decode subset
# with MINFER_CUDA_MVS_WARPS=2), GPU model tests, A/B decode benches.
R=$PWD; D=$R/.device/cudadec2; L=$OUT; S=$OUT/summary.txt
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x minfer cuda.test core.test)
echo "# built from $(cat $D/BUILT_FROM); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; timeout 60 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf >> $L/synth.txt 2>&1; echo "synth rc=$? ${SECONDS}s" >> $L/synth.txt) &
SP=$!
mkdir -p $D/td; for s in models small arch vocab templates synth; do [ -e $R/testdata/$s ] && ln -sfn $R/testdata/$s $D/td/$s; done
ops() { # label, run pattern, env...
  local lab=$1 pat=$2; shift 2
  (cd core/backend/cuda && env "$@" timeout 90 $D/cuda.test -test.v -test.count=1 -test.run "$pat" > $L/cuda-op-$lab.txt 2>&1; echo "cuda.test[$lab] rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op-$lab.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op-$lab.txt)" | tee -a $S)
  grep -E -- "--- FAIL|panic:" $L/cuda-op-$lab.txt | head -20 | tee -a $S
  echo "op outputs differing from the CPU's bits: $(grep -E ' [1-9][0-9]* differ from the CPU' $L/cuda-op-$lab.txt | wc -l) subtests" | tee -a $S
}
model() {
  local lab=$1; shift
  (cd core && env MINFER_TESTDATA=$D/td "$@" timeout 60 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu-$lab.txt 2>&1; echo "core.test[$lab] rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu-$lab.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu-$lab.txt)" | tee -a $S)
  grep -E -- "--- FAIL|panic:" $L/core-gpu-$lab.txt | head -20 | tee -a $S
  echo "logit comparisons: $(grep -c 'logits differ' $L/core-gpu-$lab.txt), with differing logits: $(grep -E 'case [0-9]+: [1-9][0-9]* of' $L/core-gpu-$lab.txt | wc -l)" | tee -a $S
}
ops default 'TestMatVec|TestDecode|TestMultiMatVec|TestRopePair|TestMatMulsOfOne|TestParseDecodeOff|TestStoreKV|TestMatMulEveryWeightType|TestFloatOps|TestRope$' X=1
model default X=1
wait $SP; cat $L/synth.txt >> $S
B=$L/bench.txt; echo "# $(date -u)" > $B
BASE="MINFER_CUDA_DECODE=one,normmv,mvnorm,mvrope"   # session 3's default: no tails, split attention
for m in "1b.gguf --gpu-layers 23" "8b4.gguf --gpu-layers 5"; do
  set -- $m
  for cfg in "$BASE" "X=1" "MINFER_CUDA_MVS_WARPS=4" "MINFER_CUDA_MVS_WARPS=2" "MINFER_CUDA_CARVEOUT=100" "$BASE" "X=1" "MINFER_CUDA_MVS_WARPS=2"; do
    echo "## $cfg minfer bench -m $1 -p 64 -n 128 -r 3 $2 $3" >> $B
    env $cfg timeout 40 $D/minfer bench -m /tmp/$1 -p 64 -n 128 -r 3 $2 $3 2>&1 | grep -E "decode  |device|rror" >> $B
  done
done
cat $B >> $S
if [ $SECONDS -lt 150 ]; then ops warps2 'TestMatVec|TestMultiMatVec|TestDecodeChains|TestDecodeAttention' MINFER_CUDA_MVS_WARPS=2; fi
if [ $SECONDS -lt 165 ]; then model warps2 MINFER_CUDA_MVS_WARPS=2; fi
echo "total ${SECONDS}s" | tee -a $S
