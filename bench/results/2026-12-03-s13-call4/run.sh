#!/bin/bash
# Session 13 lead, H200 call 4 (issue 12 on the device host's CPU): call 3 found the half offload's CPU half slower
# with col16 weights on this 16-thread Xeon. The CPU alone here (--gpu-layers 0, all threads), alternating final
# (ab1c242, col16) and base (3462c04, x8): 1B Q4_K_M and Q4_0 synth files, pp128 / tg128; then a Go CPU profile
# of each binary's Q4_K_M decode (-p 1 -n 128). Carry .device/s13c (the binaries of call 3). Logs: $OUT.
R=$PWD; D=$R/.device/s13c; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x minfer-base minfer-final)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo); $(lscpu | grep -E 'Thread|Core|Socket|L2|L3' | tr '\n' ';'); load: $(cat /proc/loadavg)" | tee $S
(timeout 100 $D/minfer-final synth --preset 1b --type Q4_K_M -o /tmp/1bk.gguf > $L/synth.txt 2>&1; echo "rc=$?" >> $L/synth.txt; timeout 100 $D/minfer-final synth --preset 1b --type Q4_0 -o /tmp/1b0.gguf >> $L/synth.txt 2>&1; echo "rc=$?" >> $L/synth.txt)
grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 120 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^CPU|^cpu|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/cpu-bench.txt; }
for m in 1bk 1b0; do for round in 1 2; do
  bn $D/minfer-final bench -m /tmp/$m.gguf -p 128 -n 128 -r 2 --gpu-layers 0
  bn $D/minfer-base bench -m /tmp/$m.gguf -p 128 -n 128 -r 2 --gpu-layers 0
done; done
bn $D/minfer-final bench -m /tmp/1bk.gguf -p 1 -n 128 --gpu-layers 0 -cpuprofile $OUT/final.prof
bn $D/minfer-base bench -m /tmp/1bk.gguf -p 1 -n 128 --gpu-layers 0 -cpuprofile $OUT/base.prof
echo "load at end: $(cat /proc/loadavg); total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
