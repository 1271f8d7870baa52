#!/bin/bash
# Session 12 lead, H200 call 1 (issue 11): main 97e2f56 (the fattn-mma merge + the tensor-core prefill attention
# the default only where no quantized weight is on the backend; MINFER_CUDA_FATTN=mma for every model).
# TestFlashAttention + fattn tests; the whole cuda op test binary; the core GPU tests (testdata + ../shared's
# synth Q4_0, carried); then the full 8B Q4_K (32 blocks) pp512/tg128 alternating the default and
# MINFER_CUDA_FATTN=mma; the 1.1B Q4_0 decode after a 16-token prompt (llama-bench's tg128 starts from an empty
# cache) and after 512. Carry .device/s12a. Logs: $OUT.
R=$PWD; D=$R/.device/s12a; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth8b.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth8b.txt; timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $L/synth8b.txt 2>&1; echo "synth1b rc=$?" >> $L/synth8b.txt) &
SP=$!
(cd core/backend/cuda && timeout 100 $D/cuda.test -test.v -test.count=1 -test.run 'TestFlashAttention|TestFattn' > $L/fa.txt 2>&1; echo "TestFlashAttention rc=$? pass=$(grep -c -- '--- PASS' $L/fa.txt) fail=$(grep -c -- '--- FAIL' $L/fa.txt) ${SECONDS}s" | tee -a $S)
grep -E -- "--- FAIL|ILLEGAL|panic" $L/fa.txt | head -8 | tee -a $S
(cd core/backend/cuda && timeout 150 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources|TestFlashAttention' > $L/cuda-op.txt 2>&1; echo "cuda.test (but TestFlashAttention, run above) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 180 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -25 | tee -a $S
grep -E "gpu_prefill_test.go:[0-9]+: 44 positions" $L/core-gpu.txt | sed 's/^ *//' | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
wait $SP; cat $L/synth8b.txt | grep -E "rc=|wrote" | tee -a $S
for round in 1 2; do
  bn MINFER_CUDA_FATTN= $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33
  bn MINFER_CUDA_FATTN=mma $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33
done
for round in 1 2; do
  bn $D/minfer bench -m /tmp/1b.gguf -p 16 -n 128 -r 3 --gpu-layers 23
  bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
done
bn $D/minfer bench -m /tmp/8b.gguf -p 16 -n 128 -r 3 --gpu-layers 33
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
