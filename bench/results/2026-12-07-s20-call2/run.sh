#!/bin/bash
# Session 20 call 2 (issue 11). Carry .device/s20b: minfer, cuda.test = s20 (main b1e4c0c + s19's patch: early reads in the
# one-token rope+attention, swiglu+quant in the gate/up mat-vec; the NORM1_THREADS knob; call 1's test fix);
# minfer-prev = main b1e4c0c. Call 1 ran the 1.1B A/B beside the 8B synth (disturbed) and its cuda.test stopped at a
# test's nil input (the tests after it never ran). Here: 1.1B A/B first with nothing beside it, then all CUDA op tests,
# then (time permitting) the 8B synth and decode A/B (the device may be an H200: its first 8B figures since s14).
R=$PWD; D=$R/.device/s20b; L=$OUT/logs; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test minfer minfer-prev)
S=$L/summary.txt
snap() { cp $S $OUT/summary.txt; (cd $OUT && tar czf logs.tgz.tmp logs && mv logs.tgz.tmp logs.tgz); }
fin() { echo "total ${SECONDS}s" | tee -a $S; snap; rm -rf $OUT/logs; }
trap fin EXIT
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader); $(nproc) cpus" | tee $S
timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; echo "synth1b rc=$? ${SECONDS}s" | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 120 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for r in 1 2 3; do
  bn $D/minfer-prev bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn MINFER_CUDA_DECODE=mvnorm,mvrope,swmv $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn MINFER_CUDA_NORM1_THREADS=256 $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
done
snap
(cd core/backend/cuda && timeout 200 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test (all) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "--- (PASS|FAIL): (TestSwigluMatVec|TestRopeStoreAttention|TestRopeStoreAttentionEarly|TestPolledReads|TestMatVecSplit|TestPTXPDLMarkers|TestGPUProgrammaticLaunchSameLogits) " $L/cuda-op.txt | head -8 | tee -a $S
snap
[ $SECONDS -lt 200 ] || exit 0
timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf >> $L/synth.txt 2>&1; echo "synth8b rc=$? ${SECONDS}s" | tee -a $S
for r in 1 2; do
  [ $SECONDS -lt 400 ] || break
  bn $D/minfer-prev bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
  bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
done
snap
[ $SECONDS -lt 420 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33
