#!/bin/bash
# Session 22, device call 1 (the s21 call1 build, bench/results/2026-12-07-s21-call1/build.sh) (issue 11). Built on the CPU machine (see BUILT_FROM in the summary's first line):
#   D=.device/s21a; minfer, cuda.test, core.test from main; minfer-np, cuda-np.test, core-np.test from main +
#   bench/results/2026-12-07-s21-call1/np21.patch (the norm prologue; off by default, MINFER_CUDA_DECODE=mvnorm,mvrope
#   turns it on), PTX regenerated with nvcc 11.8. Stripped (-ldflags="-s -w"), tar + xz. Carry .device/s21a.
# Order: 1.1B A/B with nothing beside it; then op tests (the np binary holds main's tests plus TestNormPro*) with
# the 8B synth in the background; core GPU tests with the prologue on; 8B A/B, prefill, half offload.
R=$PWD; D=$R/.device/s21a; L=$OUT/logs; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x *.test minfer minfer-np)
S=$L/summary.txt
snap() { cp $S $OUT/summary.txt; (cd $OUT && tar czf logs.tgz.tmp logs && mv logs.tgz.tmp logs.tgz); }
fin() { echo "total ${SECONDS}s" | tee -a $S; snap; rm -rf $OUT/logs; }
trap fin EXIT
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader); $(nproc) cpus" | tee $S
timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; echo "synth1b rc=$? ${SECONDS}s" | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 120 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
ON=MINFER_CUDA_DECODE=mvnorm,mvrope
# (v4, full budget: the s21 v3 script plus the 8B synth in the background during the op tests, 8B A/B, prefill,
# half offload)
for r in 1 2 3; do
  bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn $ON $D/minfer-np bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
done
bn MINFER_CUDA_DECODE=mvrope $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
bn MINFER_CUDA_DECODE=mvnorm $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
snap
(timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth8.txt 2>&1; echo "synth8b rc=$? ${SECONDS}s" >> $L/synth8.txt) &
SP=$!
(cd core/backend/cuda && timeout 70 $D/cuda-np.test -test.v -test.count=1 -test.run 'NormPro|SwigluMatVec' > $L/cuda-op-np.txt 2>&1; echo "cuda-np.test NormPro|SwigluMatVec rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op-np.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op-np.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op-np.txt | head -20 | tee -a $S
grep -E -- "--- (PASS|FAIL): (TestSwigluMatVec/Q8_0|TestNormPro)" $L/cuda-op-np.txt | tee -a $S
snap
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td $ON timeout 120 $D/core-np.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core-np.test GPU (prologue on) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -20 | tee -a $S
snap
wait $SP; tail -1 $L/synth8.txt | tee -a $S
for r in 1 2; do
  [ $SECONDS -lt 420 ] || break
  bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
  bn $ON $D/minfer-np bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
done
snap
[ $SECONDS -lt 470 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33
[ $SECONDS -lt 500 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 16
