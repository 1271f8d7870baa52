#!/bin/bash
# Session 15 lead, device call 2 (issue 11), the budget's last ~280 s: branch ropeattn after the reverts of
# the streaming and swiglu-fused mat-vecs, with the wide tensor-core tiles by default for chunks of 128+
# tokens. The CUDA op tests (the core GPU tests ran green in call 1; no time for both), beside the synth;
# then pp512 alternating the default (mmqw_*) with MINFER_CUDA_MMQ=narrow (mmqp_*): 8B Q4_K and 1.1B Q4_0.
# Carry .device/s15b. Logs: $OUT.
R=$PWD; D=$R/.device/s15b; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; echo "synth1b rc=$?" >> $L/synth.txt; t0=$SECONDS; timeout 130 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf >> $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt) &
SP=$!
(cd core/backend/cuda && timeout 150 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 60 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for r in 1 2; do
  [ $SECONDS -lt 200 ] && bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 4 -r 3 --gpu-layers 23
  [ $SECONDS -lt 200 ] && bn MINFER_CUDA_MMQ=narrow $D/minfer bench -m /tmp/1b.gguf -p 512 -n 4 -r 3 --gpu-layers 23
done
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
for r in 1 2; do
  [ $SECONDS -lt 215 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 4 -r 3 --gpu-layers 33
  [ $SECONDS -lt 215 ] && bn MINFER_CUDA_MMQ=narrow $D/minfer bench -m /tmp/8b.gguf -p 512 -n 4 -r 3 --gpu-layers 33
done
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
