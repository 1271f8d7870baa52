#!/bin/bash
# Session 7, call 2 (issue 11): SASS-level warp-stall sampling (ncu SourceCounters) of the 8B-shaped decode's
# mat-vec+tail kernels and attention (main 00f09de), to see where the one-block tails and attention wait.
R=$PWD; D=$R/.device/s7a; L=/tmp/L; mkdir -p $L
(cd $D && gunzip -f *.gz; chmod +x minfer minfer-notail)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM); $(date -u); $(ncu --version | tail -1)" | tee $S
[ -s /tmp/8b4.gguf ] || timeout 40 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf 2>&1 | tail -1 | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 300 ncu --clock-control none --cache-control none --section SourceCounters --section WarpStateStats -k 'regex:mvs_q4_k_t|attn_x_one' --launch-skip 120 --launch-count 4 -o /tmp/p $D/minfer bench -m /tmp/8b4.gguf -p 16 -n 40 --gpu-layers 5 > $L/ncu.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
tail -5 $L/ncu.txt | tee -a $S
ncu -i /tmp/p.ncu-rep --page source --csv --print-source sass > $L/src.csv 2>&1; echo "src rc=$? $(wc -l < $L/src.csv) lines" | tee -a $S
head -3 $L/src.csv | cut -c1-600 | tee -a $S
gzip -9 -c $L/src.csv > $OUT/src.csv.gz
ncu -i /tmp/p.ncu-rep --page details > $OUT/details.txt 2>&1
echo "total ${SECONDS}s" | tee -a $S
