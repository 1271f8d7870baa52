#!/bin/bash
# Session 22, device call 7 (issue 11: 8B prefill; the budget's last ~170 s). Carry .device/s22f (BUILT_FROM):
# minfer-base = main; minfer-mmq = + the pipelined mat-mul's two barriers a k-step; minfer, cuda.test, core.test =
# + the kept softmax's exps and block sums in one pass. Flash/mat-mul op tests and the core prefill/logit GPU tests
# beside the 8B synth, then 8B pp512 base / mmq / head, twice.
R=$PWD; D=$R/.device/s22f; L=$OUT/logs; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x *.test minfer minfer-base minfer-mmq)
S=$L/summary.txt
snap() { cp $S $OUT/summary.txt; (cd $OUT && tar czf logs.tgz.tmp logs && mv logs.tgz.tmp logs.tgz); }
fin() { echo "total ${SECONDS}s" | tee -a $S; snap; rm -rf $OUT/logs; }
trap fin EXIT
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cpus" | tee $S
(timeout 150 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth8.txt 2>&1; echo "synth8b rc=$? ${SECONDS}s" >> $L/synth8.txt) &
SP=$!
(cd core/backend/cuda && timeout 70 $D/cuda.test -test.v -test.count=1 -test.run 'Flash|MMQ|PTX' > $L/cuda-op.txt 2>&1; echo "cuda.test Flash|MMQ|PTX rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -10 | tee -a $S
snap
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 60 $D/core.test -test.v -test.count=1 -test.run 'GPUPrefill|GPULogits' > $L/core-gpu.txt 2>&1; echo "core.test GPUPrefill|GPULogits rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -10 | tee -a $S
grep -E "positions, [0-9]+ of" $L/core-gpu.txt | sed 's/.*: 44 positions, //' | cut -c1-40 | sort | uniq -c | tee -a $S
snap
bn() { echo "## $*" | tee -a $S; timeout 40 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
wait $SP; tail -1 $L/synth8.txt | tee -a $S
for r in 1 2; do
  for m in minfer-base minfer-mmq minfer; do bn $D/$m bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33; done
done
