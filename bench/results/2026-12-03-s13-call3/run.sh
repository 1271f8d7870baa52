#!/bin/bash
# Session 13 lead, H200 call 3 (issues 11, 12): is the half offload slower with col16 CPU weights? Call 2 (main
# ab1c242) read 25.4 / 27.9 tok/s decode and 256 / 289 prefill for the 8B-shaped Q4_K model with 16 of 32 blocks
# on the GPU, session 12 (x8) 37.1 / 37.8 and 300 / 312, with the host's meter 22 % lower this time. Alternating
# final (ab1c242: col16 for Q4_0/Q4_K/Q6_K at AVX-512) and base (3462c04: x8), the same binary kind; then the CPU
# alone (1B Q4_K_M synth, 16 threads) the same way. Carry .device/s13c. Logs: $OUT.
R=$PWD; D=$R/.device/s13c; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x minfer-base minfer-final)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo); load: $(cat /proc/loadavg)" | tee $S
(t0=$SECONDS; timeout 200 $D/minfer-final synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt; timeout 100 $D/minfer-final synth --preset 1b --type Q4_K_M -o /tmp/1bk.gguf >> $L/synth.txt 2>&1; echo "synth1b rc=$?" >> $L/synth.txt) 
grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 150 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|^CPU|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn $D/minfer-final bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 16
  bn $D/minfer-base bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 16
done
for round in 1 2; do
  bn $D/minfer-final bench -m /tmp/1bk.gguf -p 128 -n 64 -r 2
  bn $D/minfer-base bench -m /tmp/1bk.gguf -p 128 -n 64 -r 2
done
echo "load at end: $(cat /proc/loadavg); total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
