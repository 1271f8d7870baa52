#!/bin/bash
# Session 17 lead, device call 1 (issue 11): branch fa17. minfer-base = main 3f46726; minfer-v1 = 4659242 (the
# exact flash attention with 16-byte copies, FMA chains, V converted once for a block's rows, the kept scores'
# softmax once over the seen tiles; mmq_act_q8k a warp per super-block); minfer (and the test binaries) = the
# branch head (v1 + two threads a score). Order by value: CUDA op tests (attention, mmq) beside the synth; the
# prefill bench round (8B Q4_K base / v1 / head / head with MINFER_CUDA_FATTN=mma; 1.1B base / head); the core
# GPU tests; every kernel's time in one 8B pp512; ncu source counters of the flash kernel; decode; half offload.
# Carry .device/s17a. Logs: $OUT.
R=$PWD; D=$R/.device/s17a; L=$OUT/logs; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test core.test minfer minfer-base minfer-v1)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cpus" | tee $S
(t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt; timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $L/synth.txt 2>&1; echo "synth1b rc=$?" >> $L/synth.txt) &
SP=$!
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core/backend/cuda && timeout 170 $D/cuda.test -test.v -test.count=1 -test.run 'Flash|Attention|Fattn|MMQ|Shared' -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "--- (PASS|FAIL): (TestMMQGroupsMatMulsOfOneInput|TestMMQEveryWeightType|TestFlashAttention|TestAttention[A-Za-z]*) " $L/cuda-op.txt | head -8 | tee -a $S
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
bround() {
  bn $D/minfer-base bench -m /tmp/8b.gguf -p 512 -n 16 -r 3 --gpu-layers 33
  bn $D/minfer-v1 bench -m /tmp/8b.gguf -p 512 -n 16 -r 3 --gpu-layers 33
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 16 -r 3 --gpu-layers 33
  bn MINFER_CUDA_FATTN=mma $D/minfer bench -m /tmp/8b.gguf -p 512 -n 16 -r 3 --gpu-layers 33
  bn $D/minfer-base bench -m /tmp/1b.gguf -p 512 -n 16 -r 3 --gpu-layers 23
  bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 16 -r 3 --gpu-layers 23
}
bround
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:|not charged" $L/core-gpu.txt | head -20 | tee -a $S
export MINFER_CUDA_GRAPHS=0
nc() { tag=$1; shift; echo "## ncu times $tag: $*" | tee -a $S; timeout 60 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum "$@" > $OUT/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S; }
[ $SECONDS -lt 420 ] && nc pre8ball --launch-count 420 $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 1 --gpu-layers 33
[ $SECONDS -lt 440 ] && nc pre8bv1 -k regex:'fattn|mmq_act' --launch-count 60 $D/minfer-v1 bench -m /tmp/8b.gguf -p 512 -n 1 -r 1 --gpu-layers 33
# ncu source counters of one kernel: the sections as text, then the per-instruction SASS page as CSV (xz).
ns() { tag=$1; k=$2; skip=$3; echo "## ncu source $tag ($k)" | tee -a $S
  timeout 60 ncu --clock-control none --section SourceCounters --section InstructionStats --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis -k regex:$k --launch-skip $skip --launch-count 1 -o $OUT/$tag $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 1 --gpu-layers 33 > $OUT/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  timeout 30 ncu -i $OUT/$tag.ncu-rep --print-details all >> $OUT/ncu-$tag.txt 2>&1
  timeout 30 ncu -i $OUT/$tag.ncu-rep --page source --print-source sass --csv > $OUT/ncu-$tag-sass.csv 2>$OUT/ncu-$tag-sass.err; echo "source page rc=$? $(wc -c < $OUT/ncu-$tag-sass.csv) bytes" | tee -a $S
  xz -9 $OUT/ncu-$tag-sass.csv 2>/dev/null; rm -f $OUT/$tag.ncu-rep; }
[ $SECONDS -lt 460 ] && ns fa8b fattn 1
[ $SECONDS -lt 480 ] && ns mw8b mmqw_q4_k 2
unset MINFER_CUDA_GRAPHS
[ $SECONDS -lt 500 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
[ $SECONDS -lt 510 ] && bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
[ $SECONDS -lt 520 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 1 --gpu-layers 16
echo "total ${SECONDS}s" | tee -a $S
