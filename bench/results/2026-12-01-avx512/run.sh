#!/bin/bash
# Device run of helper avx512 (issue 12): on the device host's CPU (AVX-512
# VNNI), the quant twin tests at every level, the cpu backend tests, the
# llama.cpp reference-logit tests at the default (AVX512) level, the kernel
# benchmarks (avx2 vs avx512), and minfer bench on 1B synth files, 2
# threads, alternating the default level with MINFER_CPU_LEVEL=avx2.
# Run from the repository root with .device/avx512 carried; logs under $OUT.
set -o pipefail
R=$PWD; D=$R/.device/avx512; S=$OUT/summary.txt; B=$OUT/bench.txt
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x minfer *.test)
echo "# $(date -u) built from $(cat $D/BUILT_FROM); $(grep -m1 'model name' /proc/cpuinfo); nproc $(nproc)" | tee $S
echo "# flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|f16c|avx512|avx_vnni|amx)' | tr '\n' ' ')" | tee -a $S
# The synth files are written while the tests run.
( for t in Q4_0 Q8_0 Q4_K; do t0=$SECONDS; timeout 60 $D/minfer synth --preset 1b --type $t -o /tmp/1b-$t.gguf > $OUT/synth-$t.txt 2>&1; echo "synth $t rc=$? $((SECONDS-t0))s" >> $OUT/synth.txt; done ) &
SP=$!
tst() { # label dir binary args...
  local lab=$1 dir=$2 bin=$3; shift 3
  (cd $dir && timeout 150 $D/$bin -test.v -test.count=1 "$@" > $OUT/$lab.txt 2>&1; echo "$lab rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $OUT/$lab.txt) fail=$(grep -c -- '--- FAIL' $OUT/$lab.txt) skip=$(grep -c -- '--- SKIP' $OUT/$lab.txt)" | tee -a $S)
  grep -E -- "--- FAIL|panic:" $OUT/$lab.txt | head -20 | tee -a $S
}
# (TestSynth*: files of testdata/synth, not carried; level-independent.)
tst quant-test core/quant quant.test -test.skip Synth
grep -A2 -E "TestAVX512OfferedWhenPresent|TestAVX2OfferedWhenPresent" $OUT/quant-test.txt | head -8 | tee -a $S
tst cpu-test core/backend/cpu cpu.test
mkdir -p /tmp/td/synth; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s /tmp/td/$s; done
MINFER_TESTDATA=/tmp/td tst core-llamacpp core core.test -test.run LlamaCpp -test.skip GPU
wait $SP; cat $OUT/synth.txt | tee -a $S
(cd core/quant && timeout 80 $D/quant.test -test.run '^$' -test.bench 'Tile8/avx|Rows8/avx|Kernel/avx' -test.benchtime 200ms > $OUT/kernel-bench.txt 2>&1; echo "kernel bench rc=$? ${SECONDS}s" | tee -a $S)
grep -E "^Benchmark" $OUT/kernel-bench.txt | tee -a $S
echo "# $(date -u)" > $B
for t in Q4_0 Q8_0 Q4_K; do
  for lvl in default avx2; do
    echo "## $t level=$lvl: minfer bench -m /tmp/1b-$t.gguf -p 128 -n 64 -t 2 -r 3" >> $B
    if [ $lvl = default ]; then env -u MINFER_CPU_LEVEL timeout 60 $D/minfer bench -m /tmp/1b-$t.gguf -p 128 -n 64 -t 2 -r 3 >> $B 2>&1
    else MINFER_CPU_LEVEL=$lvl timeout 60 $D/minfer bench -m /tmp/1b-$t.gguf -p 128 -n 64 -t 2 -r 3 >> $B 2>&1; fi
    echo "rc=$? ${SECONDS}s" >> $B
  done
done
cat $B | tee -a $S
echo "total ${SECONDS}s" | tee -a $S
