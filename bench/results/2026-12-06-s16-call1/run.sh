#!/bin/bash
# Session 16 lead, device call 1 (issue 11): branch fa16 = main f515359 (wide tiles default for chunks >= 128 tokens,
# the test fixes of s15 that never ran on a GPU) + the exact flash attention with its mask read once up front and
# the next tile's K/V in flight (cp.async),
# and Q4_K/Q5_K tensor-core tiles copying only a k-step's half super-block, 16 bytes a copy, and the flash
# attention's scores four threads a position (fa_perm); minfer-base = f515359; minfer-v1 = acd7224 (all but the
# scores change). The CUDA op tests, then the core GPU tests (each alone on the GPU),
# beside the synth; then 1.1B Q4_0 pp512 wide (default) vs narrow, 8B pp512 default vs MINFER_CUDA_FATTN=mma,
# decode 1.1B / 8B, half offload (8B, 16 of 32 blocks), ncu full sections of the wide prefill tile mmqw_q4_k and
# of the exact flash attention, and every kernel's time in one 8B pp512.
# Carry .device/s16b. Logs: $OUT.
R=$PWD; D=$R/.device/s16b; L=$OUT/logs; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test core.test minfer minfer-base minfer-v1)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cpus" | tee $S
(t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt; timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $L/synth.txt 2>&1; echo "synth1b rc=$?" >> $L/synth.txt) &
SP=$!
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core/backend/cuda && timeout 170 $D/cuda.test -test.v -test.count=1 -test.run 'Flash|Attention|MMQ|MatVecRopeTail|RopeStore|Gate|Shared' -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "--- (PASS|FAIL): (TestMatVecRopeTail|TestMMQGroupsMatMulsOfOneInput|TestMMQEveryWeightType|TestRopeStoreAttention|TestFlashAttention) " $L/cuda-op.txt | head -8 | tee -a $S
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
bround() {
  bn $D/minfer-base bench -m /tmp/8b.gguf -p 512 -n 16 -r 3 --gpu-layers 33
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 16 -r 3 --gpu-layers 33
  bn $D/minfer-v1 bench -m /tmp/8b.gguf -p 512 -n 16 -r 3 --gpu-layers 33
  bn MINFER_CUDA_FATTN=mma $D/minfer-base bench -m /tmp/8b.gguf -p 512 -n 16 -r 3 --gpu-layers 33
  bn MINFER_CUDA_FATTN=mma $D/minfer bench -m /tmp/8b.gguf -p 512 -n 16 -r 3 --gpu-layers 33
  bn $D/minfer-base bench -m /tmp/1b.gguf -p 512 -n 16 -r 3 --gpu-layers 23
  bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 16 -r 3 --gpu-layers 23
}
bround
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:|not charged" $L/core-gpu.txt | head -20 | tee -a $S
export MINFER_CUDA_GRAPHS=0
nf() { tag=$1; shift; echo "## ncu full $tag: $*" | tee -a $S; timeout 45 ncu --set full "$@" > $OUT/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S; }
nc() { tag=$1; shift; echo "## ncu times $tag: $*" | tee -a $S; timeout 60 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum "$@" > $OUT/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S; }
[ $SECONDS -lt 480 ] && nc pre8ball --launch-count 420 $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 1 --gpu-layers 33
[ $SECONDS -lt 510 ] && nf fa8b -k regex:'fattn' --launch-skip 1 --launch-count 1 $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 1 --gpu-layers 33
unset MINFER_CUDA_GRAPHS
[ $SECONDS -lt 530 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
[ $SECONDS -lt 545 ] && bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
[ $SECONDS -lt 555 ] && bn MINFER_CUDA_MMQ=narrow $D/minfer bench -m /tmp/1b.gguf -p 512 -n 16 -r 3 --gpu-layers 23
[ $SECONDS -lt 540 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 1 --gpu-layers 16
[ $SECONDS -lt 540 ] && nf pre8bw -k regex:'mmqw_q4_k' --launch-skip 2 --launch-count 2 $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 --gpu-layers 33
echo "total ${SECONDS}s" | tee -a $S

