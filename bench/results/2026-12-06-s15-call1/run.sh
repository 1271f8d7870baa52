#!/bin/bash
# Session 15 lead, device call 1 (issue 11): branch ropeattn — main a609208 + the rope/store group fused into the
# one-block attention (attn_x_one_rope_*, s14), the K-quant mma's mins from block sums, mmqw_* wide tiles
# (MINFER_CUDA_MMQ=wide), the streaming mat-vecs mvr_* (on without mvstream in MINFER_CUDA_DECODE), swiglu fused
# into the Q4_0/Q8_0 down mat-vec (mvs_*_sw). minfer-base = main a609208. The CUDA op tests, then the core GPU
# tests (each alone on the GPU), beside the synth; decode alternating the default with both fusions off
# (MINFER_CUDA_DECODE=mvnorm,mvrope,mvstream,ropeattn,swmv) and the 8B with the streaming mat-vecs; 8B pp512 base /
# new / wide; ncu full sections of the 8B decode mat-vecs (mvs gate/up, mvp down) and the prefill mmqp_q4_k
# gate/up and down. Carry .device/s15a. Logs: $OUT.
R=$PWD; D=$R/.device/s15a; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test core.test minfer minfer-base)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt; timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $L/synth.txt 2>&1; echo "synth1b rc=$?" >> $L/synth.txt) &
SP=$!
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core/backend/cuda && timeout 170 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "TestRopeStoreAttention" $L/cuda-op.txt | head -8 | tee -a $S
(cd core && MINFER_TESTDATA=$D/td timeout 120 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:|not charged" $L/core-gpu.txt | head -20 | tee -a $S
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
OFF=MINFER_CUDA_DECODE=mvnorm,mvrope,mvstream,ropeattn,swmv
STREAM=MINFER_CUDA_DECODE=mvnorm,mvrope
for r in 1 2; do
  bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn $OFF $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
  bn $OFF $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
  bn $STREAM $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
  bn $D/minfer-base bench -m /tmp/8b.gguf -p 512 -n 16 -r 3 --gpu-layers 33
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 16 -r 3 --gpu-layers 33
  bn MINFER_CUDA_MMQ=wide $D/minfer bench -m /tmp/8b.gguf -p 512 -n 16 -r 3 --gpu-layers 33
  [ $SECONDS -gt 300 ] && break
done
[ $SECONDS -lt 320 ] && bn MINFER_CUDA_DECODE=mvnorm,mvrope,mvstream,swmv $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
[ $SECONDS -lt 320 ] && bn $D/minfer-base bench -m /tmp/1b.gguf -p 512 -n 16 -r 3 --gpu-layers 23
[ $SECONDS -lt 320 ] && bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 16 -r 3 --gpu-layers 23
export MINFER_CUDA_GRAPHS=0
nf() { tag=$1; shift; echo "## ncu full $tag: $*" | tee -a $S; timeout 45 ncu --set full "$@" > $OUT/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S; }
[ $SECONDS -lt 340 ] && nf dec8b -k regex:'mv[sp]_q4_k' --launch-skip 40 --launch-count 4 $D/minfer bench -m /tmp/8b.gguf -p 1 -n 4 --gpu-layers 33
[ $SECONDS -lt 365 ] && nf pre8b -k regex:'mmqp_q4_k' --launch-skip 2 --launch-count 2 $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 --gpu-layers 33
nc() { tag=$1; skip=$2; cnt=$3; shift 3; echo "## ncu $tag: skip $skip count $cnt: $*" | tee -a $S; timeout 40 ncu --clock-control none --cache-control none --launch-skip $skip --launch-count $cnt --metrics gpu__time_duration.sum "$@" > $OUT/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S; }
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
