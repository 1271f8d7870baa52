#!/bin/bash
# Session 11, H200 call 5 (issue 11): the pipelined mmq kernels of Q4_K and Q5_K bounded for three blocks an SM
# (168 registers) — all CUDA op tests, the GPU model tests, ncu of mmqp_q4_k (occupancy, duration), then the
# 8B-shaped Q4_K model (all 32 blocks + output) pp512/tg128 alternating minfer (this build) and minfer-base
# (HEAD 8e1a3c9). Carry .device/s11e. Logs: $OUT.
R=$PWD; D=$R/.device/s11e; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz; do dx $f; done; chmod +x cuda.test core.test minfer minfer-base)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth 8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt; timeout 100 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf >> $L/synth.txt 2>&1) &
SP=$!
(cd core/backend/cuda && timeout 240 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources|TestPDLPTXAssembles' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 240 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt) cases=$(grep -c 'logits differ' $L/core-gpu.txt) nonzero=$(grep -cE ': [1-9][0-9]* of [0-9]+ logits differ' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -25 | tee -a $S
wait $SP; grep rc= $L/synth.txt | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 100 ncu --clock-control none --cache-control none --section SpeedOfLight --section Occupancy --section LaunchStats -k 'regex:mmqp_q4_k' --launch-skip 0 --launch-count 4 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 1 --gpu-layers 5 > $OUT/ncu-mmqp.txt 2>&1; echo "ncu rc=$? ${SECONDS}s" | tee -a $S
awk '/^  [a-z_0-9]+ \(/{k=$1" "$2" "$3} /Duration|Registers Per Thread|Achieved Occupancy|Block Limit Registers|Block Limit Shared|L1\/TEX Cache Throughput/{print k" | "$0}' $OUT/ncu-mmqp.txt | sed 's/  */ /g' | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|step|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  for m in minfer minfer-base; do bn X=$m $D/$m bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33; done
done
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
