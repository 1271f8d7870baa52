#!/bin/bash
# Session 9, H200 call 5 (issues 11, 12): all CUDA op tests and GPU model tests (testdata + ../shared/testdata/
# synth's Q4_0, carried) on main with the deferred input writes, the dropped mapping pages and the merged CPU
# work (x8 Q4_0/Q8_0 copies, commands off the locked main goroutine); benches with the step timing: 8B Q4_K
# and 1.1B Q4_0 all blocks + output, 8B 16 of 32 blocks; peak RSS of a full-GPU 8B run. Logs: $OUT.
R=$PWD; D=$R/.device/s9e; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz synth/*.xz; do dx $f; done; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(cd core/backend/cuda && timeout 240 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "--- (PASS|FAIL): (TestWriteHostWindows|TestBusyTiming|TestSignatureSeesEveryWindow)|one span of" $L/cuda-op.txt | head -20 | tee -a $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done; ln -sfn $D/synth $D/td/synth
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt) cases=$(grep -c 'logits differ' $L/core-gpu.txt) nonzero=$(grep -cE ': [1-9][0-9]* of [0-9]+ logits differ' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -25 | tee -a $S
grep -E -- "--- (PASS|FAIL).*synth-llama-Q4_0" $L/core-gpu.txt | head -12 | tee -a $S
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > /dev/null 2>&1; echo "synth 8b rc=$? $((SECONDS-t0))s" | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "prefill|decode|device|rc=|rror" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn X=defaults $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 33
  bn X=defaults $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
done
for round in 1 2; do
  bn X=half $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 1 --gpu-layers 16
done
if [ -x /usr/bin/time ]; then /usr/bin/time -v $D/minfer bench -m /tmp/8b.gguf -p 64 -n 16 --gpu-layers 33 > $L/rss.txt 2>&1; grep -E "Maximum resident|decode " $L/rss.txt | tee -a $S
else python3 -c "
import resource,subprocess,sys
subprocess.run(sys.argv[1:])
print('Maximum resident set size (kbytes):', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)" $D/minfer bench -m /tmp/8b.gguf -p 64 -n 16 --gpu-layers 33 > $L/rss.txt 2>&1; grep -E "Maximum resident|decode " $L/rss.txt | tee -a $S; fi
bn X=json-8b $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33 --json
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
