#!/bin/bash
# Prepared in session 27 for the next session's first device call (issue 11; session 27 got no machine). Carry: from an s27 checkout, `bash bench/lib/build.sh s27b main` (minfer-base: main;
# minfer, cuda.test, core.test: s27, the rope's cos/sin before attn_x_one_rope's PDL wait, the norms' shorter one-thread chain, the logits' copy out split with the owner thread, a decode step's logits read straight into a pinned row); run from that checkout with
# `bash bench/results/2026-12-07-s27-next/run.sh` and carry [".device/s27b"]. In order, each step only while time is
# left (limit the call to 600 s): on an H200 (the issue's machine) the targets (8B Q4_K pp512/tg128 all blocks and
# 16 of 32, 1.1B Q4_0); the 1.1B decode, base, head, head without the direct read (MINFER_CUDA_DIRECTREAD=0: the copy out with the owner's help) and without either (MINFER_CUDA_READHELP=0 too), alternating; the cuda op tests of the change and of session
# 26's review mends; the core GPU tests; the 1.1B step's kernels one by one (ncu, graphs and PDL off);
# MINFER_CUDA_TWICE of every kernel the step launches; ncu's sections of the one-token attention and norm.
. bench/lib/device.sh .device/${CARRY:-s27b}
synth1
H200=0; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && H200=1
[ $H200 = 1 ] && synth8
B1="bench -m /tmp/1b.gguf -p 1 -n 128 -r 3 --gpu-layers 23"
BT=40
for r in 1 2 3; do bn $D/minfer-base $B1; bn $D/minfer $B1; bn MINFER_CUDA_DIRECTREAD=0 $D/minfer $B1; bn MINFER_CUDA_DIRECTREAD=0 MINFER_CUDA_READHELP=0 $D/minfer $B1; done
snap
tst cuda-s27 core/backend/cuda 200 $D/cuda.test -test.run 'Rope|Attn|Attention|PDL|PTX|Gate|Graph|Signature|Thread|Prelaunch|Inputs|Norm|FloatOps|DecodeChains|Polled|DirectReads|Busy|Swiglu'
if [ $H200 = 1 ]; then
  BT=120
  bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 128 -r 5 --gpu-layers 23
  wait $SP; tail -2 $L/synth8.txt | tee -a $S
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 3 --gpu-layers 33
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 128 -r 2 --gpu-layers 16
  snap
fi
td
[ $SECONDS -lt 300 ] && tst core-gpu core 170 MINFER_TESTDATA=$D/td $D/core.test -test.run GPU
if [ $SECONDS -lt 430 ]; then
echo "## the step's kernels alone (ncu gpu__time_duration, graphs and PDL off)" | tee -a $S
MINFER_CUDA_GRAPHS=0 MINFER_CUDA_PDL=0 timeout 45 ncu --csv --metrics gpu__time_duration.sum --launch-skip 3000 --launch-count 160 $D/minfer bench -m /tmp/1b.gguf -p 1 -n 40 -r 1 --gpu-layers 23 > $L/ncu-list.csv 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
python3 - $L/ncu-list.csv <<'PY' | tee -a $S
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: print("no rows"); sys.exit()
h = rows[0]; k, v = h.index("Kernel Name"), h.index("Metric Value"); u = h.index("Metric Unit")
d = collections.OrderedDict()
for r in rows[1:]:
    x = float(r[v].replace(",", "")) * (1e-3 if r[u] in ("nsecond", "ns") else 1)
    d.setdefault(r[k], []).append(x)
for n, xs in sorted(d.items(), key=lambda t: -sum(t[1])):
    print(f"{n:28s} n={len(xs):3d} mean={sum(xs)/len(xs):7.2f} us  sum={sum(xs):8.1f} us")
print(f"total {sum(sum(x) for x in d.values()):.1f} us over {sum(len(x) for x in d.values())} launches")
open(sys.argv[1] + ".names", "w").write("\n".join(n.split("(")[0] for n in d))
PY
snap
fi
names=$(cat $L/ncu-list.csv.names 2>/dev/null | sort -u)
[ -n "$names" ] || names="mvs_q4_0_1 mvs_q4_0_m mvk_ mvp_ attn_x_one norm_one swiglu_quant"
BT=30
[ $SECONDS -lt 480 ] && bn $D/minfer $B1
for k in $names; do [ $SECONDS -lt 530 ] && bn MINFER_CUDA_TWICE=$k $D/minfer $B1; done
snap
K='regex:attn_x_one_rope|norm_one'
if [ $SECONDS -lt 500 ]; then
echo "## ncu --set full, PDL and graphs off" | tee -a $S
MINFER_CUDA_GRAPHS=0 MINFER_CUDA_PDL=0 timeout 45 ncu --set full --import-source no -k "$K" --launch-skip 300 --launch-count 4 -o $L/prof $D/minfer bench -m /tmp/1b.gguf -p 1 -n 24 -r 1 --gpu-layers 23 > $L/ncu-prof.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
timeout 20 ncu -i $L/prof.ncu-rep --page details > $L/prof-details.txt 2>&1; echo "details rc=$? lines=$(wc -l < $L/prof-details.txt)" | tee -a $S
timeout 20 ncu -i $L/prof.ncu-rep --page source --csv --print-source sass > $L/prof-sass.csv 2>&1; echo "sass rc=$? lines=$(wc -l < $L/prof-sass.csv)" | tee -a $S
grep -E "^  [a-z_0-9]+|Duration|Warp Cycles Per Issued|Issue Slots Busy|Achieved Occupancy|Stall" $L/prof-details.txt | head -40 | tee -a $S
rm -f $L/prof.ncu-rep
fi
