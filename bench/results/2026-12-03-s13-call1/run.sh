#!/bin/bash
# Session 13 lead, H200 call 1 (issue 11): the ring mat-vecs (mvq_*_m: each warp streams its one-token rows
# through a ring of four slots, the grid the blocks the SMs hold at once) as the default for one token's short
# rows. TestRingMatVec (ring vs staged bits) and the mat-vec op tests; the core GPU model tests (testdata);
# BenchmarkMatVec ring/staged/v1; then alternating ring (default) and MINFER_CUDA_DECODE=mvnorm,mvrope,mvring
# (staged): 1.1B Q4_0 after a 16-token prompt, 8B-shaped Q4_K p512/tg128. Carry .device/s13a. Logs: $OUT.
R=$PWD; D=$R/.device/s13a; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt; timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $L/synth.txt 2>&1; echo "synth1b rc=$?" >> $L/synth.txt) &
SP=$!
(cd core/backend/cuda && timeout 150 $D/cuda.test -test.v -test.count=1 -test.run 'TestRingMatVec|TestMatMulEveryWeightType|TestMultiMatVec|TestDecodeChains|TestMatMulOverWeightRows|TestMatMulsOfOneInput' > $L/cuda-mv.txt 2>&1; echo "cuda.test mat-vecs rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-mv.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-mv.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:|ring [0-9]" $L/cuda-mv.txt | head -20 | tee -a $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -25 | tee -a $S
(cd core/backend/cuda && timeout 90 $D/cuda.test -test.run XXX -test.bench 'BenchmarkMatVec/(Q4_0|Q4_K|Q6_K/4096)' -test.benchtime 300x > $OUT/bench-matvec.txt 2>&1; echo "bench rc=$? ${SECONDS}s" | tee -a $S)
grep -E "^Benchmark" $OUT/bench-matvec.txt | tee -a $S
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn MINFER_CUDA_DECODE=mvnorm,mvrope $D/minfer bench -m /tmp/1b.gguf -p 16 -n 128 -r 3 --gpu-layers 23
  bn MINFER_CUDA_DECODE=mvnorm,mvrope,mvring $D/minfer bench -m /tmp/1b.gguf -p 16 -n 128 -r 3 --gpu-layers 23
done
for round in 1 2; do
  bn MINFER_CUDA_DECODE=mvnorm,mvrope $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33
  bn MINFER_CUDA_DECODE=mvnorm,mvrope,mvring $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33
done
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
