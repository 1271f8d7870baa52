#!/bin/bash
# Prepared in session 26 for the next session's first device call (issue 11: what is in the way of the 1.1B decode).
# Carry: from a main checkout, `bash bench/lib/build.sh NAME HEAD` (base = head: only minfer is used) and
# `. bench/lib/device.sh .device/NAME` below with that name. In order: (1) ncu of the one-token attention and
# norm_one with PDL off (call 1 of session 26: "Unknown Error on device 0" from ncu's counter library on norm_one
# with --set full and PDL on; session 22's --set full on prefill kernels worked); (2) if that fails, a short list of
# sections; (3) MINFER_CUDA_TWICE per mat-vec kernel family (the one-token mat-vecs were 58 % of a 1.1B step in
# session 26 call 1: which of them), alternating with the default.
. bench/lib/device.sh .device/${CARRY:-s27a}
synth1
B="bench -m /tmp/1b.gguf -p 1 -n 24 -r 1 --gpu-layers 23"
K='regex:attn_x_one_rope|norm_one'
echo "## ncu --set full, PDL and graphs off" | tee -a $S
MINFER_CUDA_GRAPHS=0 MINFER_CUDA_PDL=0 timeout 120 ncu --set full --import-source no -k "$K" --launch-skip 300 --launch-count 4 -o $L/prof $D/minfer $B > $L/ncu-prof.txt 2>&1; r=$?; echo "rc=$r ${SECONDS}s" | tee -a $S
if [ $r -ne 0 ] || grep -q "==ERROR==" $L/ncu-prof.txt; then
  echo "## ncu sections only" | tee -a $S
  rm -f $L/prof.ncu-rep
  MINFER_CUDA_GRAPHS=0 MINFER_CUDA_PDL=0 timeout 120 ncu --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats -k "$K" --launch-skip 300 --launch-count 4 -o $L/prof $D/minfer $B > $L/ncu-prof2.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
fi
timeout 40 ncu -i $L/prof.ncu-rep --page details > $L/prof-details.txt 2>&1; echo "details rc=$? lines=$(wc -l < $L/prof-details.txt)" | tee -a $S
timeout 40 ncu -i $L/prof.ncu-rep --page source --csv --print-source sass > $L/prof-sass.csv 2>&1; echo "sass rc=$? lines=$(wc -l < $L/prof-sass.csv)" | tee -a $S
grep -E "^  [a-z_0-9]+|Duration|Warp Cycles Per Issued|Issue Slots Busy|Achieved Occupancy|Stall" $L/prof-details.txt | head -60 | tee -a $S
rm -f $L/prof.ncu-rep
snap
BT=40
B1="bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23"
for r in 1 2; do
  bn $D/minfer $B1
  for k in mvs_q4_0_1 mvs_q4_0_m mvk_ mvp_ attn_x_one norm_one; do bn MINFER_CUDA_TWICE=$k $D/minfer $B1; done
done
