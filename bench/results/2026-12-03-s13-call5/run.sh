#!/bin/bash
# Session 13 lead, H200 call 5 (issues 11, 12): main 518baef (col16 only with up to four CPU threads; the host's
# 16 threads take x8) against base 3462c04 (x8): the 8B-shaped Q4_K model with 16 of 32 blocks on the GPU,
# pp512/tg128, alternating; the CPU half should now be base's. Carry .device/s13d. Logs: $OUT.
R=$PWD; D=$R/.device/s13d; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x minfer minfer-base)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) CPUs; load: $(cat /proc/loadavg)" | tee $S
t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 150 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|^CPU|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 16
  bn $D/minfer-base bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 16
done
echo "load at end: $(cat /proc/loadavg); total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
