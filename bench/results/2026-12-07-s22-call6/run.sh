#!/bin/bash
# Session 22, device call 6 (issue 11): main as it stands at the end of the session's GPU work, every CUDA op test
# and every core GPU test, and the benchmark figures for the closing note. Carry .device/s22e (BUILT_FROM).
R=$PWD; D=$R/.device/s22e; L=$OUT/logs; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x *.test minfer)
S=$L/summary.txt
snap() { cp $S $OUT/summary.txt; (cd $OUT && tar czf logs.tgz.tmp logs && mv logs.tgz.tmp logs.tgz); }
fin() { echo "total ${SECONDS}s" | tee -a $S; snap; rm -rf $OUT/logs; }
trap fin EXIT
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader); $(nproc) cpus" | tee $S
timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; echo "synth1b rc=$? ${SECONDS}s" | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 120 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for r in 1 2 3; do bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23; done
bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 1 -r 10 --gpu-layers 23
snap
(timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth8.txt 2>&1; echo "synth8b rc=$? ${SECONDS}s" >> $L/synth8.txt) &
SP=$!
(cd core/backend/cuda && timeout 150 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test (all) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
tail -3 $L/cuda-op.txt | tee -a $S
snap
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 100 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -20 | tee -a $S
snap
wait $SP; tail -1 $L/synth8.txt | tee -a $S
for r in 1 2; do [ $SECONDS -lt 290 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33; done
for r in 1 2; do bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33; done
snap
[ $SECONDS -lt 300 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 16
