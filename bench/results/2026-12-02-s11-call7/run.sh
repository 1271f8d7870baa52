#!/bin/bash
# Session 11, H200 call 7 (issue 11): the split decode attention's scores eight lanes a position
# (attn_x_scores8_*) — the attention op tests against the CPU's bits, then decode at 512+ positions of
# context alternating the default and MINFER_CUDA_DECODE=mvnorm,mvrope,scores1 (the one-thread scores) on
# the 8B-shaped 4-block Q4_K model (head size 128) and the 1.1B Q4_0 (64). Carry .device/s11g. Logs: $OUT.
R=$PWD; D=$R/.device/s11g; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz; do dx $f; done; chmod +x cuda.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(timeout 60 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf > $L/synth.txt 2>&1; timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $L/synth.txt 2>&1; echo "synth rc=$?" >> $L/synth.txt) &
SP=$!
(cd core/backend/cuda && timeout 90 $D/cuda.test -test.v -test.count=1 -test.run 'Attention|Attn|Split|ParseDecodeOff|PTX' > $L/attn.txt 2>&1; echo "attention tests rc=$? pass=$(grep -c -- '--- PASS' $L/attn.txt) fail=$(grep -c -- '--- FAIL' $L/attn.txt) ${SECONDS}s" | tee -a $S)
grep -E -- "--- FAIL|ILLEGAL|panic" $L/attn.txt | head -12 | tee -a $S
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 40 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^decode|step|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
if grep -q "fail=0" $S; then
for round in 1 2; do
  bn MINFER_CUDA_DECODE=mvnorm,mvrope $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 128 -r 2 --gpu-layers 5
  bn MINFER_CUDA_DECODE=mvnorm,mvrope,scores1 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 128 -r 2 --gpu-layers 5
done
bn MINFER_CUDA_DECODE=mvnorm,mvrope $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 2 --gpu-layers 23
bn MINFER_CUDA_DECODE=mvnorm,mvrope,scores1 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 2 --gpu-layers 23
fi
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
