#!/bin/bash
# Session 10, H200 call 3 (issues 11, 12): the 8B Q4_K synth model with 16 of 32 blocks on the GPU (the
# other 16 and the output head on the device host's CPU), this session's CPU kernels (minfer, built from
# BUILT_FROM) against main at the session's start (minfer-base, 79a0916), alternating, two rounds; the
# host's CPU model first. Logs: $OUT.
R=$PWD; D=$R/.device/s10c; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz; do dx $f; done; chmod +x minfer minfer-base)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(grep -m1 "model name" /proc/cpuinfo; nproc; grep -o -w -m1 -E "avx512_vnni" /proc/cpuinfo) | tee -a $S
t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > /dev/null 2>&1; echo "synth 8b rc=$? $((SECONDS-t0))s" | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 120 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "prefill|decode|device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2; do
  bn X=final $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 1 --gpu-layers 16
  bn X=base $D/minfer-base bench -m /tmp/8b.gguf -p 512 -n 128 -r 1 --gpu-layers 16
done
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
