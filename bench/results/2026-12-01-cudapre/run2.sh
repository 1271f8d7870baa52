#!/bin/bash
# Device call 2 (helper cudapre): all CUDA op tests (pipelined mmq default,
# then the MMQ tests on the unpipelined kernels), the GPU model tests with
# the prefill test, the 8B-shaped Q4_K and 1.1B Q4_0 prefill benches, and
# an ncu kernel-time profile of one 8B prefill.
R=$PWD
D=$R/.device/cudapre
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x minfer core.test cuda.test)
export MINFER_TESTDATA=$R/testdata
nvidia-smi --query-gpu=name,memory.free,memory.total,driver_version,clocks.sm --format=csv > $OUT/nvidia-smi.txt
(cd core/backend/cuda && timeout 120 $D/cuda.test -test.v -test.count=1 -test.skip 'TestPTXMatchesSources|NoDriver' > $OUT/cuda-op-test.txt 2>&1; echo "cuda.test rc=$?")
grep -cE -- "--- PASS" $OUT/cuda-op-test.txt; grep -E -- "--- FAIL|panic" $OUT/cuda-op-test.txt | head -20
(cd core/backend/cuda && MINFER_CUDA_MMQ=plain timeout 60 $D/cuda.test -test.v -test.count=1 -test.run 'MMQ' > $OUT/cuda-op-test-plain.txt 2>&1; echo "cuda.test plain rc=$?")
grep -E -- "^--- |panic" $OUT/cuda-op-test-plain.txt | head
(cd core && timeout 90 $D/core.test -test.v -test.count=1 -test.run 'GPU' > $OUT/core-gpu-test.txt 2>&1; echo "core.test rc=$?")
grep -E -- "^--- |panic|worst NMSE vs the CPU" $OUT/core-gpu-test.txt | head -30
B=$OUT/bench.txt
echo "# $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" > $B
t0=$(date +%s); timeout 150 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf >> $B 2>&1; echo "synth 8b: rc=$? $(( $(date +%s)-t0 )) s" >> $B
echo "## minfer bench -m 8b-q4_k.gguf -p 512 -n 32 -r 2 --gpu-layers 33 (pipelined mmq + fattn)" >> $B
timeout 60 $D/minfer bench -m /tmp/8b.gguf -p 512 -n 32 -r 2 --gpu-layers 33 >> $B 2>&1
echo "## MINFER_CUDA_MMQ=plain (unpipelined mmq + fattn)" >> $B
MINFER_CUDA_MMQ=plain timeout 60 $D/minfer bench -m /tmp/8b.gguf -p 512 -n 32 -r 2 --gpu-layers 33 >> $B 2>&1
timeout 30 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf >> $B 2>&1
echo "## minfer bench -m 1b-q4_0.gguf -p 512 -n 32 -r 3 --gpu-layers 23 (pipelined mmq + fattn)" >> $B
timeout 40 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 32 -r 3 --gpu-layers 23 >> $B 2>&1
echo "## MINFER_CUDA_MMQ=plain" >> $B
MINFER_CUDA_MMQ=plain timeout 40 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 32 -r 3 --gpu-layers 23 >> $B 2>&1
echo "## MINFER_CUDA_MMQ=0 MINFER_CUDA_FATTN=0 (before: batched mat-vec, attention per query)" >> $B
MINFER_CUDA_MMQ=0 MINFER_CUDA_FATTN=0 timeout 40 $D/minfer bench -m /tmp/1b.gguf -p 512 -n 32 -r 2 --gpu-layers 23 >> $B 2>&1
cat $B
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
export MINFER_CUDA_GRAPHS=0
for m in 8b:33 1b:23; do
  timeout 60 $NCU --clock-control none --metrics gpu__time_duration.sum --csv --log-file $OUT/ncu-${m%:*}.csv $D/minfer bench -m /tmp/${m%:*}.gguf -p 512 -n 1 --gpu-layers ${m#*:} > $OUT/ncu-${m%:*}-run.txt 2>&1; echo "ncu ${m%:*} rc=$?"
  python3 - $OUT/ncu-${m%:*}.csv <<'PY'
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
for k, v in sorted(tot.items(), key=lambda x: -x[1])[:12]:
    print("%8.2f ms %5.1f%% %5d  %s" % (v / 1e6, 100 * v / s, cnt[k], k[:60]))
PY
done
