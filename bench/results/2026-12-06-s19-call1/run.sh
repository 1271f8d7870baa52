#!/bin/bash
# Session 19 lead, device call 1 (issue 11): main 84953f5 as it is, on the machine the pool gives (asked: H200).
# The figures: 1.1B Q4_0 and 8B Q4_K decode (-p 1 -n 128, as llama-bench's tg128) and pp512, 8B with 16
# of 32 blocks on the GPU; then ncu per-kernel times of one decode step of each (graphs off). Carry .device/s19a.
R=$PWD; D=$R/.device/s19a; L=$OUT/logs; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x minfer)
S=$L/summary.txt
snap() { (cd $OUT && tar czf logs.tgz.tmp logs && mv logs.tgz.tmp logs.tgz); }
fin() { echo "total ${SECONDS}s" | tee -a $S; snap; cp $S $OUT/summary.txt; rm -rf $OUT/logs; }
trap fin EXIT
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader); $(nproc) cpus" | tee $S
$D/minfer devices 2>&1 | tee -a $S
(t0=$SECONDS; timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; echo "synth1b rc=$? $((SECONDS-t0))s" >> $L/synth.txt; timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf >> $L/synth.txt 2>&1; echo "synth8b rc=$? $((SECONDS-t0))s" >> $L/synth.txt) &
SP=$!
bn() { echo "## $*" | tee -a $S; timeout 120 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
while [ ! -s /tmp/1b.gguf ] || ! grep -q synth1b $L/synth.txt; do sleep 1; done
bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 4 -r 3 --gpu-layers 23
nc() { tag=$1; skip=$2; cnt=$3; shift 3; echo "## ncu $tag: skip $skip count $cnt: $*" | tee -a $S; MINFER_CUDA_GRAPHS=0 timeout 100 ncu --clock-control none --cache-control none --launch-skip $skip --launch-count $cnt --metrics gpu__time_duration.sum --print-summary per-kernel "$@" > $L/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  grep -E "^  [a-zA-Z_0-9]+|gpu__time_duration.sum" $L/ncu-$tag.txt | paste - - | awk '{printf "%s %s %s | n=%s | us min/max/avg %s %s %s\n",$1,$2,$3,$(NF-8),$(NF-2),$(NF-1),$NF}' | tee -a $S; }
nc dec1b-p16 1000 400 $D/minfer bench -m /tmp/1b.gguf -p 16 -n 8 --gpu-layers 23
snap
wait $SP; grep -E "rc=|wrote" $L/synth.txt | tee -a $S
bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 4 -r 3 --gpu-layers 33
bn $D/minfer bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23
snap
bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 16
snap
[ $SECONDS -lt 420 ] && nc dec8b-p16 1500 330 $D/minfer bench -m /tmp/8b.gguf -p 16 -n 8 --gpu-layers 33
[ $SECONDS -lt 480 ] && bn $D/minfer bench -m /tmp/8b.gguf -p 1 -n 128 -r 3 --gpu-layers 33
