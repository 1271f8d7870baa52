#!/bin/bash
# Session 5, call 3 (issue 11): programmatic dependent launch with the mat-vecs' trigger moved after their
# rows (the kernel after one starts staging its weights while this one's last blocks and its tail run),
# op tests with it on, decode benches on/off alternating; then the per-kernel decode profile with ncu
# (graphs off, PDL off) of the 8B-shaped Q4_K (4 blocks + output) and the 1.1B Q4_0.
R=$PWD; D=$R/.device/s5b; L=/tmp/L; mkdir -p $L
(cd $D && gunzip -f *.gz; chmod +x cuda.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
[ -s /tmp/1b.gguf ] || timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
[ -s /tmp/8b4.gguf ] || timeout 40 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf 2>&1 | tail -1 | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 60 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "decode|rc=|rror" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn MINFER_CUDA_PDL=1 $D/minfer bench -m /tmp/1b.gguf -p 16 -n 256 -r 3 --gpu-layers 23
  bn MINFER_CUDA_PDL=0 $D/minfer bench -m /tmp/1b.gguf -p 16 -n 256 -r 3 --gpu-layers 23
  bn MINFER_CUDA_PDL=1 $D/minfer bench -m /tmp/8b4.gguf -p 16 -n 256 -r 3 --gpu-layers 5
  bn MINFER_CUDA_PDL=0 $D/minfer bench -m /tmp/8b4.gguf -p 16 -n 256 -r 3 --gpu-layers 5
done
(cd core/backend/cuda && timeout 120 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > $L/cuda-op-pdl.txt 2>&1; echo "cuda.test (pdl on, late trigger) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op-pdl.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op-pdl.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op-pdl.txt | head -10 | tee -a $S
echo "## ncu 8b4: MINFER_CUDA_PDL=0 MINFER_CUDA_GRAPHS=0 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 600 --launch-count 160 minfer bench -m 8b4.gguf -p 16 -n 40 --gpu-layers 5" | tee -a $S
MINFER_CUDA_PDL=0 MINFER_CUDA_GRAPHS=0 timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 600 --launch-count 160 $D/minfer bench -m /tmp/8b4.gguf -p 16 -n 40 --gpu-layers 5 > $L/ncu-8b4.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
echo "## ncu 1b: same, --launch-skip 1500 --launch-count 300, --gpu-layers 23" | tee -a $S
MINFER_CUDA_PDL=0 MINFER_CUDA_GRAPHS=0 timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 1500 --launch-count 300 $D/minfer bench -m /tmp/1b.gguf -p 16 -n 40 --gpu-layers 23 > $L/ncu-1b.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
for m in 8b4 1b; do grep -E "^  [a-z_0-9]+|gpu__time_duration.sum" $L/ncu-$m.txt | paste - - | awk '{printf "%s %s %s | n=%s | us min/max/avg %s %s %s\n",$1,$2,$3,$(NF-8),$(NF-2),$(NF-1),$NF}' > $OUT/ncu-$m-summary.txt; done
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
