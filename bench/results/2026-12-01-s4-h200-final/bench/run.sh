#!/bin/bash
# Session 4, final bench call (issues 11, 12) on the merged main, right after the tests call on the same
# warm machine (its /tmp/8b.gguf is reused when present): the CPU kernels' twin tests, the CPU side by side with llama.cpp's
# llama-bench on this host (2 threads, alternating, synth 1b Q4_0 / Q8_0 / Q4_K_M), then the GPU benches
# (1.1B Q4_0 all blocks; 8B Q4_K all blocks and 16 of 32). Logs: $OUT/summary.txt, $OUT/logs.tgz.
R=$PWD; D=$R/.device/s4b; L=/tmp/LB; mkdir -p $L
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x minfer llama-bench quant.test cpu.test)
export LD_LIBRARY_PATH=$D
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cpus; $(grep -m1 'model name' /proc/cpuinfo)" | tee $S
ls -la /tmp/8b.gguf 2>&1 | tee -a $S
# The CPU kernels' twin tests at every level this host has (avx512 included), on the merged kernels.
(cd core/quant && timeout 100 $D/quant.test -test.count=1 -test.skip Synth -test.v > $L/quant-test.txt 2>&1; echo "quant.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/quant-test.txt) fail=$(grep -c -- '--- FAIL' $L/quant-test.txt) skip=$(grep -c -- '--- SKIP' $L/quant-test.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/quant-test.txt | head -20 | tee -a $S
(cd core/backend/cpu && timeout 60 $D/cpu.test -test.count=1 -test.v > $L/cpu-test.txt 2>&1; echo "cpu.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cpu-test.txt) fail=$(grep -c -- '--- FAIL' $L/cpu-test.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cpu-test.txt | head -20 | tee -a $S
for t in Q4_0 Q8_0 Q4_K_M; do timeout 60 $D/minfer synth --preset 1b --type $t -o /tmp/1b-$t.gguf 2>&1 | tail -1 | tee -a $S; done
echo "## CPU side by side, 2 threads: llama-bench -m M -t 2 -p 128 -n 64 -r 3 -o json / minfer bench -m M -t 2 -p 128 -n 64 -r 3 --gpu-layers 0 --json, alternating" | tee -a $S
for t in Q4_0 Q8_0 Q4_K_M; do
  timeout 60 $D/llama-bench -m /tmp/1b-$t.gguf -t 2 -p 128 -n 64 -r 3 -o json > $L/llama-$t.json 2>$L/llama-$t.err; echo "llama $t rc=$? ${SECONDS}s: $(grep -o '"avg_ts": [0-9.]*' $L/llama-$t.json | tr '\n' ' ')" | tee -a $S
  timeout 60 $D/minfer bench -m /tmp/1b-$t.gguf -t 2 -p 128 -n 64 -r 3 --gpu-layers 0 --json > $L/minfer-$t.json 2>$L/minfer-$t.err; echo "minfer $t rc=$? ${SECONDS}s: $(grep -oE '"(prefill|decode)_tok_s": [0-9.]*|"kernel_level": "[a-z0-9]*"|"measured_memory_gb_s": [0-9.]*|"decode_fraction_of_memory_bandwidth": [0-9.]*' $L/minfer-$t.json | tr '\n' ' ')" | tee -a $S
done
echo "## GPU benches" | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 80 "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "prefill|decode|device|rc=" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
bn $D/minfer bench -m /tmp/1b-Q4_0.gguf -p 512 -n 128 -r 3 --gpu-layers 23
if [ ! -s /tmp/8b.gguf ]; then t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > /dev/null 2>&1; echo "synth 8b rc=$? $((SECONDS-t0))s" | tee -a $S; fi
if [ -s /tmp/8b.gguf ]; then
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 33
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 1 --gpu-layers 16
fi
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
