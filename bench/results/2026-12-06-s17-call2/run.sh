#!/bin/bash
# Session 17 lead, device call 2 (issue 11): branch fa17 (base vs v2 was call 1). minfer-v2 = 31c62eb (call 1's
# head: the exact flash attention's fewer instructions + two threads a score; mmq_act_q8k a warp per super-block);
# minfer-v3 = c49e190 (v2 + the mat-mul fragments by ldmatrix); minfer (and the test binaries) = the branch head
# (v3 + the kept scores' exps a position a thread, then the block sums; unsigned chunk indices). Order by value: the
# whole CUDA op test binary beside the synth; two alternating prefill rounds; the core GPU tests; every kernel's time
# in one 8B pp512; decode. Carry .device/s17c. Everything the call writes goes into $OUT/logs.tgz (the run returns
# only a few files).
R=$PWD; D=$R/.device/s17c; L=$OUT/logs; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test core.test minfer minfer-v2 minfer-v3)
S=$L/summary.txt
snap() { (cd $OUT && tar czf logs.tgz.tmp logs && mv logs.tgz.tmp logs.tgz); } # partial results survive a timeout
fin() { echo "total ${SECONDS}s" | tee -a $S; snap; rm -rf $OUT/logs; }
trap fin EXIT
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cpus" | tee $S
(t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt; timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $L/synth.txt 2>&1; echo "synth1b rc=$?" >> $L/synth.txt) &
SP=$!
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core/backend/cuda && timeout 200 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test (all) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "--- (PASS|FAIL): (TestMMQGroupsMatMulsOfOneInput|TestMMQEveryWeightType|TestFlashAttention) " $L/cuda-op.txt | head -8 | tee -a $S
snap
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
bround() {
  for b in minfer-v2 minfer-v3 minfer; do bn $D/$b bench -m /tmp/8b.gguf -p 512 -n 4 -r 3 --gpu-layers 33; done
  for b in minfer-v2 minfer; do bn $D/$b bench -m /tmp/1b.gguf -p 512 -n 4 -r 3 --gpu-layers 23; done
}
bround; snap
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:|not charged" $L/core-gpu.txt | head -20 | tee -a $S
snap
[ $SECONDS -lt 330 ] && { bround; snap; }
export MINFER_CUDA_GRAPHS=0
nc() { tag=$1; shift; echo "## ncu times $tag: $*" | tee -a $S; timeout 60 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum "$@" > $L/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S; }
[ $SECONDS -lt 450 ] && nc pre8ball --launch-count 420 $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 1 --gpu-layers 33
[ $SECONDS -lt 470 ] && nc pre8bv2 -k regex:'fattn|mmqw' --launch-count 60 $D/minfer-v2 bench -m /tmp/8b.gguf -p 512 -n 1 -r 1 --gpu-layers 33
unset MINFER_CUDA_GRAPHS
[ $SECONDS -lt 500 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
[ $SECONDS -lt 510 ] && bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
