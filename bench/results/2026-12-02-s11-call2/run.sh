#!/bin/bash
# Session 11, H200 call 2 (issue 11): the 512-thread head-128 flash kernel as the default — all CUDA op
# tests and the GPU model tests; then ncu sections of the
# prefill mat-mul (mmqp_q4_k) and the decode attention kernels (8B-shaped, 4 blocks), to see what limits
# them. Carry .device/s11b. Logs: $OUT.
R=$PWD; D=$R/.device/s11b; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz; do dx $f; done; chmod +x cuda.test core.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
(timeout 100 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf > $L/synth.txt 2>&1; echo "synth8b4 rc=$?" >> $L/synth.txt) &
SP=$!
(cd core/backend/cuda && timeout 240 $D/cuda.test -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources|TestPDLPTXAssembles' > $L/cuda-op.txt 2>&1; echo "cuda.test rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 240 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $L/core-gpu.txt 2>&1; echo "core.test GPU rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt) cases=$(grep -c 'logits differ' $L/core-gpu.txt) nonzero=$(grep -cE ': [1-9][0-9]* of [0-9]+ logits differ' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -25 | tee -a $S
wait $SP; grep rc= $L/synth.txt | tee -a $S
echo "## ncu sections mmqp_q4_k (prefill p512)" | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 150 ncu --clock-control none --cache-control none --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section InstructionStats -k 'regex:mmqp_q4_k' --launch-skip 0 --launch-count 4 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 1 --gpu-layers 5 > $OUT/ncu-mmqp.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
echo "## ncu sections decode attention + mvs (p512 context)" | tee -a $S
MINFER_CUDA_GRAPHS=0 timeout 150 ncu --clock-control none --cache-control none --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis -k 'regex:attn_x_|mvp_q4_k|mvs_q4_k|norm_one' --launch-skip 60 --launch-count 14 $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 8 --gpu-layers 5 > $OUT/ncu-dec.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
