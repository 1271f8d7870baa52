#!/bin/bash
# Session 14 lead, device call 1 (issue 11): programmatic dependent launch (pdl.go) on main 4ac958e + the PDL
# change. The CUDA op tests and the core GPU tests (with PDL on, the default on compute 9.0; the new
# TestGPUProgrammaticLaunchSameLogits compares on and off bit for bit), concurrently with the synth of the
# 8B-shaped Q4_K and the 1.1B Q4_0; then alternating benches with MINFER_CUDA_PDL unset (on) and =0 (off).
# Carry .device/s14a. Logs: $OUT.
R=$PWD; D=$R/.device/s14a; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) CPUs" | tee $S
(t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt; timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $L/synth.txt 2>&1; echo "synth1b rc=$?" >> $L/synth.txt) &
SP=$!
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core/backend/cuda && timeout 230 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" >> $L/res.txt) &
OP=$!
(cd core && MINFER_TESTDATA=$D/td timeout 260 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" >> $L/res.txt) &
CP=$!
wait $OP $CP; cat $L/res.txt | tee -a $S
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt $L/core-gpu.txt | head -25 | tee -a $S
grep -A3 "TestGPUProgrammaticLaunchSameLogits" $L/core-gpu.txt | head -12 | tee -a $S
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for r in 1 2; do
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33
  bn MINFER_CUDA_PDL=0 $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33
  bn $D/minfer bench -m /tmp/1b.gguf -p 16 -n 128 -r 3 --gpu-layers 23
  bn MINFER_CUDA_PDL=0 $D/minfer bench -m /tmp/1b.gguf -p 16 -n 128 -r 3 --gpu-layers 23
  [ $SECONDS -gt 470 ] && break
done
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
