#!/bin/bash
# Session 11, H200 call 3 (issue 11): the register Q4_K mat-vec (mvr_q4_k_1_rR) — TestMatVecRegs against the
# CPU's bits, BenchmarkMatVec for Q4_K (staged/v1/regs1/2/4, DRAM-resident weights), then the 8B-shaped Q4_K
# model (32 blocks + output on the GPU), pp512/tg128, alternating MINFER_CUDA_MVR=off (staged, main) / 2 / 4.
# Carry .device/s11c. Logs: $OUT.
R=$PWD; D=$R/.device/s11c; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz; do dx $f; done; chmod +x cuda.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth 8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt) &
SP=$!
(cd core/backend/cuda && timeout 120 $D/cuda.test -test.v -test.count=1 -test.run 'TestMatVecRegs|TestMatVecPiped' > $L/regs.txt 2>&1; echo "TestMatVecRegs|Piped rc=$? pass=$(grep -c -- '--- PASS' $L/regs.txt) fail=$(grep -c -- '--- FAIL' $L/regs.txt) ${SECONDS}s" | tee -a $S)
grep -E -- "--- FAIL|ILLEGAL|panic|differ" $L/regs.txt | head -12 | tee -a $S
(cd core/backend/cuda && timeout 150 $D/cuda.test -test.run XXX -test.bench 'BenchmarkMatVec/Q4_K' -test.benchtime 300x > $OUT/bench-matvec.txt 2>&1; echo "bench rc=$? ${SECONDS}s" | tee -a $S)
grep -E "^Benchmark" $OUT/bench-matvec.txt | tee -a $S
wait $SP; cat $L/synth.txt | tail -1 | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|step|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
if grep -q "fail=0" $S; then
for round in 1 2; do
  for m in off 2 4; do bn MINFER_CUDA_MVR=$m $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 33; done
done
fi
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
