#!/bin/bash
# Device call 1 (helper cudapre): op tests of the tensor-core mat-mul and
# flash attention, the GPU model tests, prefill benches with the new kernels
# on and off, and an ncu kernel-time profile of one 1.1B prefill each way.
R=$PWD
D=$R/.device/cudapre
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x minfer core.test cuda.test synthl)
export MINFER_TESTDATA=$R/testdata
nvidia-smi --query-gpu=name,memory.free,memory.total,driver_version,clocks.sm --format=csv > $OUT/nvidia-smi.txt
(cd core/backend/cuda && timeout 100 $D/cuda.test -test.v -test.count=1 -test.run 'MMQ|Flash|MatMul|Attention' -test.skip 'TestPTXMatchesSources|NoDriver' > $OUT/cuda-op-test.txt 2>&1; echo "cuda.test rc=$?")
grep -cE -- "--- PASS" $OUT/cuda-op-test.txt; grep -E -- "--- FAIL|panic" $OUT/cuda-op-test.txt | head -20
(cd core && timeout 60 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $OUT/core-gpu-test.txt 2>&1; echo "core.test rc=$?")
grep -E -- "--- FAIL|panic|vs llama.cpp" $OUT/core-gpu-test.txt | head -20
B=$OUT/bench.txt
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $B
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $B 2>&1
t0=$(date +%s); timeout 40 $D/synthl 8b Q4_K 4 /tmp/8b4.gguf >> $B 2>&1; echo "synthl 8b Q4_K 4 layers: rc=$? $(( $(date +%s)-t0 )) s" >> $B
for mg in 1b:23 8b4:5; do
  m=${mg%:*}; gl=${mg#*:}
  echo "## minfer bench -m $m.gguf -p 512 -n 32 -r 3 --gpu-layers $gl (mmq+fattn)" >> $B
  timeout 40 $D/minfer bench -m /tmp/$m.gguf -p 512 -n 32 -r 3 --gpu-layers $gl >> $B 2>&1
  echo "## MINFER_CUDA_FATTN=0 (mmq only)" >> $B
  MINFER_CUDA_FATTN=0 timeout 40 $D/minfer bench -m /tmp/$m.gguf -p 512 -n 32 -r 3 --gpu-layers $gl >> $B 2>&1
  echo "## MINFER_CUDA_MMQ=0 MINFER_CUDA_FATTN=0 (before)" >> $B
  MINFER_CUDA_MMQ=0 MINFER_CUDA_FATTN=0 timeout 60 $D/minfer bench -m /tmp/$m.gguf -p 512 -n 32 -r 2 --gpu-layers $gl >> $B 2>&1
done
cat $B
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
if [ -n "$NCU" ]; then
  export MINFER_CUDA_GRAPHS=0
  timeout 60 $NCU --clock-control none --metrics gpu__time_duration.sum --csv --log-file $OUT/ncu-after.csv $D/minfer bench -m /tmp/1b.gguf -p 512 -n 1 --gpu-layers 23 > $OUT/ncu-after-run.txt 2>&1; echo "ncu after rc=$?"
  MINFER_CUDA_MMQ=0 MINFER_CUDA_FATTN=0 timeout 60 $NCU --clock-control none --metrics gpu__time_duration.sum --csv --log-file $OUT/ncu-before.csv $D/minfer bench -m /tmp/1b.gguf -p 512 -n 1 --gpu-layers 23 > $OUT/ncu-before-run.txt 2>&1; echo "ncu before rc=$?"
  for f in after before; do
    python3 - $OUT/ncu-$f.csv <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[0]; ki = h.index("Kernel Name"); vi = h.index("Metric Value")
tot = collections.defaultdict(float); cnt = collections.Counter()
for r in rows[1:]:
    try: v = float(r[vi].replace(",", ""))
    except ValueError: continue
    tot[r[ki]] += v; cnt[r[ki]] += 1
s = sum(tot.values())
print(sys.argv[1], "total ms %.2f" % (s / 1e6))
for k, v in sorted(tot.items(), key=lambda x: -x[1])[:14]:
    print("%8.2f ms %5.1f%% %5d  %s" % (v / 1e6, 100 * v / s, cnt[k], k[:60]))
PY
  done
fi
