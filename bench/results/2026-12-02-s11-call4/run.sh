#!/bin/bash
# Session 11, H200 call 4 (issue 11): the two-row Q4_K staged mat-vec (mvs_q4_k_2, MVS_RPW_q4_k 2) — the
# staged-mat-vec tests (warps, piped, norm and rope tails) and the decode op tests against the CPU's bits,
# BenchmarkMatVec for Q4_K, then the 8B-shaped Q4_K model pp512/tg128 alternating minfer (this build) and
# minfer-base (HEAD 8e1a3c9), and the 4-block form under ncu. Carry .device/s11d. Logs: $OUT.
R=$PWD; D=$R/.device/s11d; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz; do dx $f; done; chmod +x cuda.test minfer minfer-base)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth 8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt; timeout 100 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf >> $L/synth.txt 2>&1) &
SP=$!
(cd core/backend/cuda && timeout 200 $D/cuda.test -test.v -test.count=1 -test.run 'TestMatVec|Decode|Norm|Rope|Tie|Staged|Graph' > $L/mv.txt 2>&1; echo "matvec/decode tests rc=$? pass=$(grep -c -- '--- PASS' $L/mv.txt) fail=$(grep -c -- '--- FAIL' $L/mv.txt) ${SECONDS}s" | tee -a $S)
grep -E -- "--- FAIL|ILLEGAL|panic" $L/mv.txt | head -12 | tee -a $S
(cd core/backend/cuda && timeout 150 $D/cuda.test -test.run XXX -test.bench 'BenchmarkMatVec/Q4_K' -test.benchtime 300x > $OUT/bench-matvec.txt 2>&1; echo "bench rc=$? ${SECONDS}s" | tee -a $S)
grep -E "^Benchmark" $OUT/bench-matvec.txt | tee -a $S
wait $SP; grep rc= $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|step|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
if grep -q "fail=0" $S; then
for round in 1 2; do
  for m in minfer minfer-base; do bn X=$m $D/$m bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 33; done
done
MINFER_CUDA_GRAPHS=0 timeout 100 ncu --clock-control none --cache-control none --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis -k 'regex:mvs_q4_k' --launch-skip 20 --launch-count 6 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 8 --gpu-layers 5 > $OUT/ncu-mvs.txt 2>&1; echo "ncu rc=$? ${SECONDS}s" | tee -a $S
awk '/^  [a-z_0-9]+ \(/{k=$1" "$2" "$3} /Duration|DRAM Throughput|L1\/TEX Cache Throughput|Achieved Occupancy/{print k" | "$0}' $OUT/ncu-mvs.txt | sed 's/  */ /g' | tee -a $S
fi
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
