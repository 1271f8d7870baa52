#!/bin/bash
# Session 20 call 1: s19 call 3's run.sh (never ran) plus norm_one's block capped (MINFER_CUDA_NORM1_THREADS=256 on 1.1B, 512 on 8B; the norm/tail op tests under 256), carrying .device/s20a: minfer/cuda.test/core.test = main b1e4c0c + s19-unverified.patch, minfer-prev = main b1e4c0c.
# Session 19 lead, device call 3 (issue 11): s19 head (the one-token rope+attention reading the mask and the other
# positions' cache rows before its PDL wait; the split mat-vec two rows a block by default) against minfer-prev
# (sw19's swiglu + quantization inside the gate/up mat-vec, mvs_*_w: MINFER_CUDA_DECODE=mvnorm,mvrope,swmv turns it off)
# (call 2's binary, e40d397; main's figures are call 2's: the carry limit left minfer-base out). The CUDA op tests beside the synth; 1.1B decode
# alternating; the core GPU tests (the models decode token by token: the early reads on real graphs); 8B decode
# alternating (prev with MINFER_CUDA_MVK_ROWS=2: the attention change alone); the 8B prefill and half offload.
# (Order for a short call: core GPU tests, 1.1B A/B, op tests, 8B A/B.) Carry .device/s20a. Logs in $OUT/logs.tgz, summary.txt beside it.
R=$PWD; D=$R/.device/s20a; L=$OUT/logs; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test core.test minfer minfer-prev)
S=$L/summary.txt
snap() { cp $S $OUT/summary.txt; (cd $OUT && tar czf logs.tgz.tmp logs && mv logs.tgz.tmp logs.tgz); }
fin() { echo "total ${SECONDS}s" | tee -a $S; snap; rm -rf $OUT/logs; }
trap fin EXIT
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader); $(nproc) cpus" | tee $S
(t0=$SECONDS; timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; echo "synth1b rc=$? $((SECONDS-t0))s" >> $L/synth.txt; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf >> $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt) &
SP=$!
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:|not charged" $L/core-gpu.txt | head -20 | tee -a $S
snap
bn() { echo "## $*" | tee -a $S; timeout 120 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
while ! grep -q synth1b $L/synth.txt; do sleep 1; done
for r in 1 2; do
  bn $D/minfer-prev bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn MINFER_CUDA_DECODE=mvnorm,mvrope,swmv $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn MINFER_CUDA_NORM1_THREADS=256 $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
done
snap
(cd core/backend/cuda && timeout 200 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test (all) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "--- (PASS|FAIL): (TestSwigluMatVec|TestRopeStoreAttention|TestRopeStoreAttentionEarly|TestPolledReads|TestMatVecSplit|TestPTXPDLMarkers) " $L/cuda-op.txt | head -8 | tee -a $S
(cd core/backend/cuda && MINFER_CUDA_NORM1_THREADS=256 timeout 60 $D/cuda.test -test.v -test.count=1 -test.run 'Norm|Tail' > $L/cuda-norm256.txt 2>&1; echo "cuda.test Norm|Tail NORM1_THREADS=256 rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-norm256.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-norm256.txt)" | tee -a $S)
snap
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
for r in 1 2; do
  bn MINFER_CUDA_MVK_ROWS=2 $D/minfer-prev bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
  bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
  bn MINFER_CUDA_DECODE=mvnorm,mvrope,swmv $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
  bn MINFER_CUDA_NORM1_THREADS=512 $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
done
snap
[ $SECONDS -lt 300 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33
[ $SECONDS -lt 320 ] && bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 1 -r 3 --gpu-layers 23
snap
[ $SECONDS -lt 330 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 16
[ $SECONDS -lt 350 ] && for b in minfer-prev minfer; do bn $D/$b bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23; done
