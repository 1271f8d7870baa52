#!/bin/bash
# Session 8, mmq occupancy call (issue 11): the prefill mat-mul mmqp_* (177 registers, 2 blocks an SM)
# against the same code held to 3 (mmqo_*, <=170 registers) and 4 blocks an SM (mmqq_*, <=128):
# MMQ op tests under each (MINFER_CUDA_MMQ=occ3 / occ4), ncu registers/occupancy/spills of one gate/up
# launch each, prefill A/B alternating on the 8B-shaped 4-block Q4_K model and the 1.1B Q4_0 model.
R=$PWD; D=$R/.device/s8d; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz; do dx $f; done; chmod +x cuda.test minfer)
S=$OUT/summary.txt
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
for m in default occ3 occ4; do
  (cd core/backend/cuda && MINFER_CUDA_MMQ=$m timeout 100 $D/cuda.test -test.v -test.count=1 -test.run 'TestMMQ' > $L/cuda-mmq-$m.txt 2>&1; echo "cuda.test MMQ=$m rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-mmq-$m.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-mmq-$m.txt)" | tee -a $S)
  grep -E -- "--- FAIL|panic:" $L/cuda-mmq-$m.txt | head -10 | tee -a $S
done
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf 2>&1 | tail -1 | tee -a $S
timeout 40 $D/minfer synth --preset 8b --layers 4 --type Q4_K -o /tmp/8b4.gguf 2>&1 | tail -1 | tee -a $S
for k in mmqp mmqo mmqq; do
  m=default; [ $k = mmqo ] && m=occ3; [ $k = mmqq ] && m=occ4
  echo "## ncu one ${k}_q4_k launch (gate/up)" | tee -a $S
  MINFER_CUDA_MMQ=$m MINFER_CUDA_GRAPHS=0 timeout 120 ncu --clock-control none -k regex:${k}_q4_k --launch-skip 2 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --metrics gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 1 -r 1 --gpu-layers 5 > $L/ncu-$k.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S
  grep -E "_q4_k \(|Registers Per|Theoretical Occ|Achieved Occ|Block Limit Reg|Block Limit Sha|duration|local_op_ld|Spilling Requests|L1/TEX Cache Th|Compute \(SM\)" $L/ncu-$k.txt | tee -a $S
done
bn() { echo "## $*" | tee -a $S; timeout 100 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "prefill|decode |rc=|rror" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for round in 1 2 3; do
  for m in default occ3 occ4; do
    bn MINFER_CUDA_MMQ=$m $D/minfer bench -m /tmp/8b4.gguf -p 512 -n 16 -r 3 --gpu-layers 5
  done
done
for round in 1 2; do
  for m in default occ3 occ4; do
    bn MINFER_CUDA_MMQ=$m $D/minfer bench -m /tmp/1b.gguf -p 512 -n 16 -r 3 --gpu-layers 23
  done
done
echo "total ${SECONDS}s" | tee -a $S
tar czf $OUT/logs.tgz -C $L .
