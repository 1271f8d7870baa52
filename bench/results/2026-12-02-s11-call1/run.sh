#!/bin/bash
# Session 11, H200 call 1 (issue 11): the 512-thread head-128 flash attention (s10 wide.diff with
# fattnKeepShared fixed): TestFlashAttention (every case on both kernels) + TestFattnShared, then prefill
# p512 on an 8B-shaped 4-block Q4_K model alternating MINFER_CUDA_FATTN=wide and the default; then ncu
# per-kernel durations (graphs off) of the 1.1B Q4_0 and 8B-4-block decode steps at p512 context, and of
# the 8B-4 prefill. Carry .device/s11a. Logs: $OUT.
R=$PWD; D=$R/.device/s11a; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz; do dx $f; done; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(timeout 100 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf > $L/synth.txt 2>&1; echo "synth8b4 rc=$?" >> $L/synth.txt; timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $L/synth.txt 2>&1; echo "synth1b rc=$?" >> $L/synth.txt) &
SP=$!
(cd core/backend/cuda && timeout 90 $D/cuda.test -test.v -test.count=1 -test.run 'TestFlashAttention|TestFattnShared' > $L/fa.txt 2>&1; echo "TestFlashAttention rc=$? pass=$(grep -c -- '--- PASS' $L/fa.txt) fail=$(grep -c -- '--- FAIL' $L/fa.txt) ${SECONDS}s" | tee -a $S)
grep -E -- "--- FAIL|ILLEGAL|panic" $L/fa.txt | head -8 | tee -a $S
wait $SP; cat $L/synth.txt | grep -E "rc=|wrote" | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 60 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn MINFER_CUDA_FATTN=wide $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 2 -r 3 --gpu-layers 5
  bn MINFER_CUDA_FATTN= $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 2 -r 3 --gpu-layers 5
done
nc() { tag=$1; shift; echo "## ncu $tag: $*" | tee -a $S; MINFER_CUDA_GRAPHS=0 timeout 120 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --print-summary per-kernel "$@" > $OUT/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  grep -E "^  [a-zA-Z_0-9]+|gpu__time_duration.sum" $OUT/ncu-$tag.txt | paste - - | awk '{printf "%s %s %s | n=%s | us min/max/avg %s %s %s\n",$1,$2,$3,$(NF-8),$(NF-2),$(NF-1),$NF}' | tee -a $S; }
nc dec1b --launch-skip 4000 --launch-count 600 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 64 --gpu-layers 23
nc dec8b4 --launch-skip 1500 --launch-count 300 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 64 --gpu-layers 5
nc pre8b4 --launch-skip 0 --launch-count 120 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 1 --gpu-layers 5
MINFER_CUDA_FATTN=wide nc pre8b4w --launch-skip 0 --launch-count 120 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 1 --gpu-layers 5
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
