#!/bin/bash
# Prepared in session 20 for the next device call (issue 11); NOT RUN yet. Build on the CPU machine first:
#   D=.device/s21a; mkdir -p $D
#   CGO_ENABLED=0 go build -tags nogui -ldflags="-s -w" -o $D/minfer .
#   CGO_ENABLED=0 go test -c -ldflags="-s -w" -o $D/cuda.test ./core/backend/cuda
#   CGO_ENABLED=0 go test -c -ldflags="-s -w" -o $D/core.test ./core
#   git rev-parse --short HEAD > $D/BUILT_FROM; (cd $D && tar cf bins.tar minfer cuda.test core.test && xz -9 -T2 bins.tar && rm minfer cuda.test core.test)
# then run this with carry .device/s21a (~330 s). Order: the 1.1B model first and its A/B with nothing beside it
# (s20 call 1's lesson), the CUDA op tests (call 3's never-run TestSwigluMatVec Q8_0 case among them), the core GPU
# tests, then the 8B synth and its A/B, prefill and half offload. The A/B: the default against the mat-vec tails
# (MINFER_CUDA_DECODE without mvnorm: the norm chain run by the last block of the mat-vec before it; without mvrope:
# the rope/store group likewise), off since s7 and never measured with today's kernels.
R=$PWD; D=$R/.device/s21a; L=$OUT/logs; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test core.test minfer)
S=$L/summary.txt
snap() { cp $S $OUT/summary.txt; (cd $OUT && tar czf logs.tgz.tmp logs && mv logs.tgz.tmp logs.tgz); }
fin() { echo "total ${SECONDS}s" | tee -a $S; snap; rm -rf $OUT/logs; }
trap fin EXIT
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader); $(nproc) cpus" | tee $S
timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; echo "synth1b rc=$? ${SECONDS}s" | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 120 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for r in 1 2 3; do
  bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn MINFER_CUDA_DECODE=mvrope $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn MINFER_CUDA_DECODE=mvnorm $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
done
snap
(cd core/backend/cuda && timeout 200 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test (all) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "--- PASS: TestSwigluMatVec/Q8_0" $L/cuda-op.txt | tee -a $S
snap
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 150 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -20 | tee -a $S
snap
timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf >> $L/synth.txt 2>&1; echo "synth8b rc=$? ${SECONDS}s" | tee -a $S
for r in 1 2; do
  [ $SECONDS -lt 480 ] || break
  bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
  bn MINFER_CUDA_DECODE=mvrope $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
done
snap
[ $SECONDS -lt 500 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33
[ $SECONDS -lt 520 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 16
