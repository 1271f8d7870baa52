#!/bin/bash
# Session 14 lead, device call 3 (issue 11): where a decode step's time goes after PDL. ncu per-kernel times
# (graphs off, so each kernel alone) of one decode step of the 8B-shaped Q4_K after 512 and after 16 prompt
# tokens and of the 1.1B Q4_0 after 16; then benches of the staged mat-vecs' warps per block
# (MINFER_CUDA_MVS_WARPS 8 = default, 4, 2) with PDL, at -p 1 (decode from an empty cache, as llama-bench's
# tg128) and -p 512. Carry .device/s14a (main bd9ef90's code). Logs: $OUT.
R=$PWD; D=$R/.device/s14a; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); ncu: $(command -v ncu)" | tee $S
t0=$SECONDS; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt
timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $L/synth.txt 2>&1; echo "synth1b rc=$?" >> $L/synth.txt
grep -E "rc=|wrote" $L/synth.txt | tee -a $S
# ncu: skip the prefill's and the first decode steps' launches, then one step and a bit (graphs off).
nc() { tag=$1; skip=$2; cnt=$3; shift 3; echo "## ncu $tag: skip $skip count $cnt: $*" | tee -a $S; MINFER_CUDA_GRAPHS=0 timeout 100 ncu --clock-control none --cache-control none --launch-skip $skip --launch-count $cnt --metrics gpu__time_duration.sum --print-summary per-kernel "$@" > $OUT/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  grep -E "^  [a-zA-Z_0-9]+|gpu__time_duration.sum" $OUT/ncu-$tag.txt | paste - - | awk '{printf "%s %s %s | n=%s | us min/max/avg %s %s %s\n",$1,$2,$3,$(NF-8),$(NF-2),$(NF-1),$NF}' | tee -a $S; }
nc dec8b-p512 3000 330 $D/minfer bench -m /tmp/8b.gguf -p 512 -n 12 --gpu-layers 33
nc dec8b-p16 1500 330 $D/minfer bench -m /tmp/8b.gguf -p 16 -n 8 --gpu-layers 33
nc dec1b-p16 1200 230 $D/minfer bench -m /tmp/1b.gguf -p 16 -n 8 --gpu-layers 23
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for r in 1 2; do
  for w in 8 4 2; do
    bn MINFER_CUDA_MVS_WARPS=$w $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
    bn MINFER_CUDA_MVS_WARPS=$w $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
  done
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33
  bn MINFER_CUDA_MVS_WARPS=4 $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33
  [ $SECONDS -gt 480 ] && break
done
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
