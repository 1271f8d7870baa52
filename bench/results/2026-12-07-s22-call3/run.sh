#!/bin/bash
# Session 22, device call 3 (issue 11: where the 8B prefill's time goes after call 2). Carry .device/s22b (call 2's
# binaries: minfer = main 92ab3c6, the four-row scorer; minfer-base = main 68e324a before it).
# 1.1B pp512 A/B with more repetitions; ncu: every kernel's time in an 8B pp512 run (head), the SASS-level source
# page of one fattn_f16_128w and one mmqw_q4_k launch, fattn_f16_64 base and head.
R=$PWD; D=$R/.device/s22b; L=$OUT/logs; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x *.test minfer minfer-base)
S=$L/summary.txt
snap() { cp $S $OUT/summary.txt; (cd $OUT && tar czf logs.tgz.tmp logs && mv logs.tgz.tmp logs.tgz); }
fin() { echo "total ${SECONDS}s" | tee -a $S; snap; rm -rf $OUT/logs; }
trap fin EXIT
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader); $(nproc) cpus; $(ncu --version | tail -1)" | tee $S
timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; echo "synth1b rc=$? ${SECONDS}s" | tee -a $S
(timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth8.txt 2>&1; echo "synth8b rc=$? ${SECONDS}s" >> $L/synth8.txt) &
SP=$!
nc1() { tag=$1; k=$2; shift 2; echo "## ncu $tag ($k): $*" | tee -a $S; timeout 100 ncu --set full -k regex:$k --launch-skip 3 --launch-count 1 "$@" > $L/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S; grep -E "  Duration|Executed Ipc A|Issue Slots Busy|Warp Cycles Per Issued|Executed Instructions  " $L/ncu-$tag.txt | head -8 | tee -a $S; }
nc1 fa64-base fattn_f16_64 $D/minfer-base bench -m /tmp/1b.gguf -p 512 -n 1 -r 1 --gpu-layers 23
nc1 fa64-head fattn_f16_64 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 1 -r 1 --gpu-layers 23
snap
wait $SP; tail -1 $L/synth8.txt | tee -a $S
bn() { echo "## $*" | tee -a $S; timeout 120 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for r in 1 2 3; do
  bn $D/minfer-base bench -m /tmp/1b.gguf -p 512 -n 1 -r 10 --gpu-layers 23
  bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 1 -r 10 --gpu-layers 23
done
snap
echo "## ncu all kernels, 8B pp512 (head, -r 1)" | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 150 ncu --metrics gpu__time_duration.sum --print-summary per-kernel $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 1 --gpu-layers 33 > $L/ncu-8b-all.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
grep -E "^  [a-zA-Z_0-9]+|gpu__time_duration.sum" $L/ncu-8b-all.txt | paste - - | awk '{printf "%s %s %s | n=%s | us min/max/avg %s %s %s\n",$1,$2,$3,$(NF-8),$(NF-2),$(NF-1),$NF}' | tee -a $S
snap
src() { tag=$1; k=$2; shift 2; echo "## ncu source $tag ($k)" | tee -a $S; timeout 120 ncu --set full --import-source no --page source --print-source sass --csv -k regex:$k --launch-skip 3 --launch-count 1 "$@" > $L/src-$tag.csv 2>&1; echo "rc=$? ${SECONDS}s lines=$(wc -l < $L/src-$tag.csv)" | tee -a $S; }
[ $SECONDS -lt 420 ] && src fa128w fattn_f16_128w $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 1 --gpu-layers 33
snap
[ $SECONDS -lt 480 ] && src mmqw mmqw_q4_k $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 1 --gpu-layers 33
