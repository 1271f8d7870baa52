#!/bin/bash
# Session 10, H200 call 6 (issue 11): with fattnKeepShared fixed, TestFlashAttention (every case on the
# default and the 512-thread head-size-128 kernel) and the fattn shared-memory test; then 8B-shaped Q4_K
# with 4 blocks (synth --layers 4), prefill 512 tokens alternating MINFER_CUDA_FATTN=wide and the default.
R=$PWD; D=$R/.device/s10f; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz; do dx $f; done; chmod +x cuda.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(timeout 100 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf > $L/synth.txt 2>&1; echo "synth rc=$?" >> $L/synth.txt) &
SP=$!
(cd core/backend/cuda && timeout 60 $D/cuda.test -test.v -test.count=1 -test.run 'TestFlashAttention|TestFattnShared' > $L/fa.txt 2>&1; echo "TestFlashAttention rc=$? pass=$(grep -c -- '--- PASS' $L/fa.txt) fail=$(grep -c -- '--- FAIL' $L/fa.txt)" | tee -a $S)
grep -E -- "--- FAIL|ILLEGAL" $L/fa.txt | head -5 | tee -a $S
grep -E -- "--- PASS: TestFlashAttention/" $L/fa.txt | head -4 | tee -a $S
wait $SP; tail -2 $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 40 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|rc=|rror" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn MINFER_CUDA_FATTN=wide $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 2 -r 3 --gpu-layers 5
  bn MINFER_CUDA_FATTN= $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 2 -r 3 --gpu-layers 5
done
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
