#!/bin/bash
# Session 14 lead, device call 2 (issue 11): why PDL (call 1) sped up the 1.1B's decode by 10 % and the 8B's
# not at all. The core GPU tests alone (call 1 ran them beside the op tests: the overhead check saw the other
# process's memory); 8B with a 16-token prompt and 1.1B after 512, PDL on and off; then, where nsys exists,
# the GPU trace of 8B and 1.1B decode steps (graph nodes) with PDL on and off, summarized by trace.py.
# Carry .device/s14a (the call-1 binaries). Logs: $OUT.
R=$PWD; D=$R/.device/s14a; L=/tmp/L; mkdir -p $L; B=$R/bench/results/2026-12-04-s14-call2
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); nsys: $(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -1)" | tee $S
(t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt; timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $L/synth.txt 2>&1; echo "synth1b rc=$?" >> $L/synth.txt) &
SP=$!
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 200 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:|not charged" $L/core-gpu.txt | head -25 | tee -a $S
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for r in 1 2; do
  bn $D/minfer bench -m /tmp/8b.gguf -p 16 -n 128 -r 3 --gpu-layers 33
  bn MINFER_CUDA_PDL=0 $D/minfer bench -m /tmp/8b.gguf -p 16 -n 128 -r 3 --gpu-layers 33
  bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
  bn MINFER_CUDA_PDL=0 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 3 --gpu-layers 23
done
NS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NS" ]; then
  for m in 8b:33:512 1b:23:16; do IFS=: read mod gl p <<< "$m"
    for pdl in 1 0; do
      tag=$mod-p$p-pdl$pdl; echo "## nsys $tag" | tee -a $S
      MINFER_CUDA_PDL=$pdl timeout 120 $NS profile -t cuda --cuda-graph-trace=node -o $L/$tag -f true $D/minfer bench -m /tmp/$mod.gguf -p $p -n 32 -r 1 --gpu-layers $gl > $L/nsys-$tag.txt 2>&1; echo "rc=$?" | tee -a $S
      timeout 120 $NS stats --report cuda_gpu_trace --format csv -o $L/$tag $L/$tag.nsys-rep >> $L/nsys-$tag.txt 2>&1
      f=$(ls $L/${tag}*cuda_gpu_trace*.csv 2>/dev/null | head -1); [ -n "$f" ] && python3 $B/trace.py "$f" 1200 | tee -a $S $OUT/trace-$tag.txt
      [ $SECONDS -gt 520 ] && break 2
    done
  done
fi
echo "total ${SECONDS}s" | tee -a $S
rm -f $L/*.nsys-rep $L/*.sqlite; tar czf $OUT/logs.tgz -C $L .
