#!/bin/bash
# Session 22, device call 4 (issue 11: 8B prefill). Carry .device/s22c (BUILT_FROM): minfer, cuda.test, core.test =
# main + the eight-threads-a-position scorer for the two-row kernel too (OCT), the prologue's loads in one round trip,
# the softmax's float64 sums at a fixed stride; minfer-base = main with the four-row scorer (call 2's head).
# Op tests and core prefill/logit GPU tests (8B synth in the background); 8B pp512 A/B, base / head / head with the
# two-row kernel (MINFER_CUDA_FATTN=narrow) / base narrow; 1.1B pp512 A/B; ncu of the attention kernels.
R=$PWD; D=$R/.device/s22c; L=$OUT/logs; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar; chmod +x *.test minfer minfer-base)
S=$L/summary.txt
snap() { cp $S $OUT/summary.txt; (cd $OUT && tar czf logs.tgz.tmp logs && mv logs.tgz.tmp logs.tgz); }
fin() { echo "total ${SECONDS}s" | tee -a $S; snap; rm -rf $OUT/logs; }
trap fin EXIT
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader); $(nproc) cpus" | tee $S
timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; echo "synth1b rc=$? ${SECONDS}s" | tee -a $S
(timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth8.txt 2>&1; echo "synth8b rc=$? ${SECONDS}s" >> $L/synth8.txt) &
SP=$!
(cd core/backend/cuda && timeout 100 $D/cuda.test -test.v -test.count=1 -test.run 'Flash|Fattn|PTX' > $L/cuda-op.txt 2>&1; echo "cuda.test Flash|Fattn|PTX rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op.txt | head -20 | tee -a $S
(cd core/backend/cuda && MINFER_CUDA_FATTN=narrow timeout 60 $D/cuda.test -test.v -test.count=1 -test.run 'Flash' > $L/cuda-op-narrow.txt 2>&1; echo "cuda.test Flash (narrow) rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/cuda-op-narrow.txt) fail=$(grep -c -- '--- FAIL' $L/cuda-op-narrow.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/cuda-op-narrow.txt | head -20 | tee -a $S
snap
mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done
(cd core && MINFER_TESTDATA=$D/td timeout 150 $D/core.test -test.v -test.count=1 -test.run 'GPUPrefill|GPULogits' > $L/core-gpu.txt 2>&1; echo "core.test GPUPrefill|GPULogits rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/core-gpu.txt) fail=$(grep -c -- '--- FAIL' $L/core-gpu.txt) skip=$(grep -c -- '--- SKIP' $L/core-gpu.txt)" | tee -a $S)
grep -E -- "--- FAIL|panic:" $L/core-gpu.txt | head -20 | tee -a $S
grep -E "positions, [0-9]+ of" $L/core-gpu.txt | sed 's/.*: 44 positions, //' | cut -c1-40 | sort | uniq -c | tee -a $S
snap
bn() { echo "## $*" | tee -a $S; timeout 120 env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
for r in 1 2; do
  bn $D/minfer-base bench -m /tmp/1b.gguf -p 512 -n 1 -r 10 --gpu-layers 23
  bn $D/minfer bench -m /tmp/1b.gguf -p 512 -n 1 -r 10 --gpu-layers 23
done
wait $SP; tail -1 $L/synth8.txt | tee -a $S
for r in 1 2; do
  bn $D/minfer-base bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33
  bn $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33
  bn MINFER_CUDA_FATTN=narrow $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33
  bn MINFER_CUDA_FATTN=narrow $D/minfer-base bench -m /tmp/8b.gguf -p 512 -n 1 -r 3 --gpu-layers 33
done
snap
nc1() { tag=$1; k=$2; e=$3; shift 3; echo "## ncu $tag ($k): $e $*" | tee -a $S; timeout 100 env $e ncu --set full -k regex:$k --launch-skip 3 --launch-count 1 "$@" > $L/ncu-$tag.txt 2>&1; echo "rc=$? ${SECONDS}s" | tee -a $S; grep -E "  Duration|Executed Ipc A|Warp Cycles Per Issued|Executed Instructions  |Registers Per|Achieved Occ" $L/ncu-$tag.txt | head -8 | tee -a $S; }
[ $SECONDS -lt 400 ] && nc1 fa128w-head fattn_f16_128w X=1 $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 1 --gpu-layers 33
[ $SECONDS -lt 440 ] && nc1 fa128-narrow-head fattn_f16_128 MINFER_CUDA_FATTN=narrow $D/minfer bench -m /tmp/8b.gguf -p 512 -n 1 -r 1 --gpu-layers 33
[ $SECONDS -lt 480 ] && nc1 fa64-head fattn_f16_64 X=1 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 1 -r 1 --gpu-layers 23
