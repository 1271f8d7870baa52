#!/bin/bash
# Session 12 helper fattn-mma, H200 call 1: the tensor-core prefill flash attention (fattn_mma_64/_128).
# TestFlashAttention (mma + the four exact variants) and the fattn shared tests; prefill p512 on an 8B-shaped
# 4-block Q4_K model alternating the default (mma) and MINFER_CUDA_FATTN=exact; ncu per-kernel durations
# (graphs off) of that prefill on both; the whole cuda op test binary; the GPU model tests in core
# (testdata + ../shared/testdata/synth's Q4_0, carried). Carry .device/fa1. Logs: $OUT.
R=$PWD; D=$R/.device/fa1; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar && for f in synth/*.xz; do dx $f; done; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(timeout 100 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf > $L/synth.txt 2>&1; echo "synth8b4 rc=$?" >> $L/synth.txt) &
SP=$!
(cd core/backend/cuda && timeout 100 $D/cuda.test -test.v -test.count=1 -test.run 'TestFlashAttention|TestFattn' > $L/fa.txt 2>&1; echo "TestFlashAttention rc=$? pass=$(grep -c -- '--- PASS' $L/fa.txt) fail=$(grep -c -- '--- FAIL' $L/fa.txt) ${SECONDS}s" | tee -a $S)
grep -E -- "--- FAIL|ILLEGAL|panic" $L/fa.txt | head -8 | tee -a $S
awk '/^=== RUN/{c=$3} /NMSE/ && c ~ /mma\/hd/ {sub(/^ +/,""); print c": "$0}' $L/fa.txt | tee -a $S
cp $L/fa.txt $OUT/fa.txt
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 60 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn MINFER_CUDA_FATTN= $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 2 -r 3 --gpu-layers 5
  bn MINFER_CUDA_FATTN=exact $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 2 -r 3 --gpu-layers 5
done
nc() { tag=$1; shift; echo "## ncu $tag: $*" | tee -a $S; MINFER_CUDA_GRAPHS=0 timeout 90 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --print-summary per-kernel "$@" > $OUT/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  grep -E "^  [a-zA-Z_0-9]+|gpu__time_duration.sum" $OUT/ncu-$tag.txt | paste - - | awk '{printf "%s %s %s | n=%s | us min/max/avg %s %s %s\n",$1,$2,$3,$(NF-8),$(NF-2),$(NF-1),$NF}' | tee -a $S; }
nc pre8b4 --launch-skip 0 --launch-count 120 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 1 --gpu-layers 5
MINFER_CUDA_FATTN=exact nc pre8b4x --launch-skip 0 --launch-count 120 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 1 --gpu-layers 5
(cd core/backend/cuda && timeout 150 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources|TestFlashAttention' > $L/cuda-op.txt 2>&1; echo "cuda.test (but TestFlashAttention, run above) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done; ln -sfn $D/synth $D/td/synth
(cd core && MINFER_TESTDATA=$D/td timeout $((585-SECONDS)) $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -25 | tee -a $S
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
