#!/bin/bash
# Session 19 lead, device call 2 (issue 11): branch s19 (main + host19: spinning hand-offs, polled reads, trace;
# + fa19: the exact flash attention's longest blocks first / chunk addresses once / no tile-end checks / two K
# tiles where merged; + mv19: ffn_down's split-row mat-vec where merged — BUILT_FROM says which) against
# minfer-base = main 84953f5. Order by value: the CUDA op tests beside the synth; decode A/B (1.1B, 8B; alternating);
# the core GPU tests; prefill A/B; the host path's switches; half offload; ncu of one decode step each. Carry
# .device/s19b. Everything goes into $OUT/logs.tgz; summary.txt beside it.
R=$PWD; D=$R/.device/s19b; L=$OUT/logs; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test core.test minfer minfer-base)
S=$L/summary.txt
snap() { cp $S $OUT/summary.txt; (cd $OUT && tar czf logs.tgz.tmp logs && mv logs.tgz.tmp logs.tgz); }
fin() { echo "total ${SECONDS}s" | tee -a $S; snap; rm -rf $OUT/logs; }
trap fin EXIT
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader); $(nproc) cpus" | tee $S
(t0=$SECONDS; timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; echo "synth1b rc=$? $((SECONDS-t0))s" >> $L/synth.txt; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf >> $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt) &
SP=$!
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core/backend/cuda && timeout 200 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test (all) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
grep -E -- "--- (PASS|FAIL): (TestPolledReads|TestFlashAttention|TestMatVecSplit[A-Za-z]*|TestMatVecWarps) " $L/cuda-op.txt | head -8 | tee -a $S
(cd core/backend/cuda && timeout 60 $D/cuda.test -test.run XXX -test.bench 'MatVec/(Q4_K|Q6_K)/14336' -test.benchtime 300x > $L/mvbench.txt 2>&1; echo "mvbench rc=$?" >> $L/mvbench.txt); grep -E "^Benchmark|rc=" $L/mvbench.txt | tee -a $S
snap
bn() { echo "## $*" | tee -a $S; timeout 120 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|^cuda trace|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
while ! grep -q synth1b $L/synth.txt; do sleep 1; done
for r in 1 2; do for b in minfer-base minfer; do bn $D/$b bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23; done; done
snap
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:|not charged" $L/core-gpu.txt | head -20 | tee -a $S
snap
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
for r in 1 2; do for b in minfer-base minfer; do bn $D/$b bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33; done; done
snap
for r in 1 2; do for b in minfer-base minfer; do bn $D/$b bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33; done; done
snap
bn MINFER_CUDA_TRACE=1 $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
bn MINFER_CUDA_SPIN=0 $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
bn MINFER_CUDA_POLLREAD=0 $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
bn MINFER_CUDA_DECODE=mvnorm,mvrope,mvsplit $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
bn MINFER_CUDA_MVK_ROWS=2 $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
bn MINFER_CUDA_MVK_ROWS=8 $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
snap
[ $SECONDS -lt 400 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 16
[ $SECONDS -lt 420 ] && bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 1 -r 3 --gpu-layers 23
snap
nc() { tag=$1; skip=$2; cnt=$3; shift 3; echo "## ncu $tag: skip $skip count $cnt: $*" | tee -a $S; MINFER_CUDA_GRAPHS=0 timeout 80 ncu --clock-control none --cache-control none --launch-skip $skip --launch-count $cnt --metrics gpu__time_duration.sum --print-summary per-kernel "$@" > $L/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  grep -E "^  [a-zA-Z_0-9]+|gpu__time_duration.sum" $L/ncu-$tag.txt | paste - - | awk '{printf "%s %s %s | n=%s | us min/max/avg %s %s %s\n",$1,$2,$3,$(NF-8),$(NF-2),$(NF-1),$NF}' | tee -a $S; }
[ $SECONDS -lt 450 ] && nc dec8b-p16 1500 330 $D/minfer bench -m /tmp/8b.gguf -p 16 -n 8 --gpu-layers 33
[ $SECONDS -lt 500 ] && nc dec1b-p16 1000 400 $D/minfer bench -m /tmp/1b.gguf -p 16 -n 8 --gpu-layers 23
