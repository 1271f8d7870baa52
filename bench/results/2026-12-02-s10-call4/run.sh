#!/bin/bash
# Session 10, H200 call 4 (issue 11): the 512-thread flash attention kernel for head size 128
# (fattn_f16_128w, MINFER_CUDA_FATTN=wide) — all CUDA op tests (TestFlashAttention runs every case on both
# kernels), then 8B Q4_K prefill alternating the default kernel and the wide one. Logs: $OUT.
R=$PWD; D=$R/.device/s10d; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz; do dx $f; done; chmod +x cuda.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > /dev/null 2>&1; echo "synth 8b rc=$?" > $L/synth.txt) &
SP=$!
(cd core/backend/cuda && timeout 240 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources|TestPDLPTXAssembles' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "--- (PASS|FAIL): TestFlashAttention" $L/cuda-op.txt | head -6 | tee -a $S
wait $SP; cat $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "prefill|decode  |rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2 3; do
  bn MINFER_CUDA_FATTN=wide $D/minfer bench -m /tmp/8b.gguf -p 512 -n 16 -r 2 --gpu-layers 33
  bn MINFER_CUDA_FATTN= $D/minfer bench -m /tmp/8b.gguf -p 512 -n 16 -r 2 --gpu-layers 33
done
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
