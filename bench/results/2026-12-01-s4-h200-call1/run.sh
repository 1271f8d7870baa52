#!/bin/bash
# Session 4, call 1 (issues 11, 12): per-kernel decode profile of main's CUDA path (1.1B Q4_0 all
# blocks; 8B-shaped Q4_K with 4 blocks), and the CPU side by side with llama.cpp's llama-bench on this
# host, 2 threads, alternating. Logs under $OUT.
R=$PWD; D=$R/.device/s4a; L=/tmp/L; mkdir -p $L
(cd $D && gunzip -f *.gz; chmod +x minfer llama-bench)
export LD_LIBRARY_PATH=$D
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cpus; $(grep -m1 'model name' /proc/cpuinfo)" | tee $S
ldd $D/llama-bench | grep -i "not found" | tee -a $S
for t in Q4_0 Q8_0 Q4_K; do timeout 30 $D/minfer synth --preset 1b --type $t -o /tmp/1b-$t.gguf 2>&1 | tail -1 | tee -a $S; done
timeout 30 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf 2>&1 | tail -1 | tee -a $S
echo "## ncu 1b Q4_0 (23 = all + output), graphs off: MINFER_CUDA_GRAPHS=0 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 3000 --launch-count 500 minfer bench -m 1b-Q4_0.gguf -p 16 -n 40 --gpu-layers 23" | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 3000 --launch-count 500 $D/minfer bench -m /tmp/1b-Q4_0.gguf -p 16 -n 40 --gpu-layers 23 > $L/ncu-1b.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
echo "## ncu 8b4 Q4_K (5 = all + output): same, --launch-skip 800 --launch-count 240, -n 40 --gpu-layers 5" | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 800 --launch-count 240 $D/minfer bench -m /tmp/8b4.gguf -p 16 -n 40 --gpu-layers 5 > $L/ncu-8b4.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
echo "## gpu benches (graphs on)" | tee -a $S
timeout 40 $D/minfer bench -m /tmp/1b-Q4_0.gguf -p 512 -n 128 -r 3 --gpu-layers 23 2>&1 | grep -E "prefill|decode|device" | tee -a $S
timeout 40 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 128 -r 3 --gpu-layers 5 2>&1 | grep -E "prefill|decode|device" | tee -a $S
echo "## CPU side by side, 2 threads: llama-bench -m M -t 2 -p 128 -n 64 -r 3 -o json / minfer bench -m M -t 2 -p 128 -n 64 -r 3 --gpu-layers 0 --json, alternating, 2 rounds" | tee -a $S
for round in 1 2; do for t in Q4_0 Q8_0 Q4_K; do
  timeout 60 $D/llama-bench -m /tmp/1b-$t.gguf -t 2 -p 128 -n 64 -r 3 -o json > $L/llama-$t-$round.json 2>$L/llama-$t-$round.err; echo "llama $t round $round rc=$? ${SECONDS}s: $(grep -o '"avg_ts": [0-9.]*' $L/llama-$t-$round.json | tr '\n' ' ')" | tee -a $S
  timeout 60 $D/minfer bench -m /tmp/1b-$t.gguf -t 2 -p 128 -n 64 -r 3 --gpu-layers 0 --json > $L/minfer-$t-$round.json 2>$L/minfer-$t-$round.err; echo "minfer $t round $round rc=$? ${SECONDS}s: $(grep -oE '"(prefill|decode)_tok_s": [0-9.]*|"kernel_level": "[a-z0-9]*"|"decode_fraction_of_memory_bandwidth": [0-9.]*' $L/minfer-$t-$round.json | tr '\n' ' ')" | tee -a $S
done; done
grep -E "^  [a-z_0-9]+|gpu__time_duration.sum|Invocations" $L/ncu-1b.txt | head -150 > $OUT/ncu-1b-summary.txt
grep -E "^  [a-z_0-9]+|gpu__time_duration.sum|Invocations" $L/ncu-8b4.txt | head -150 > $OUT/ncu-8b4-summary.txt
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
