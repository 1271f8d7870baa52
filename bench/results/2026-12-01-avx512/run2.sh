#!/bin/bash
# Device call 2 of helper avx512 (issue 12), on the branch merged with main:
# the quant twin tests at every level (avx512 included), the cpu backend
# tests and the llama.cpp reference-logit tests at the default (avx512)
# level; then minfer bench on the CPU (--gpu-layers 0), 2 threads, on 1B
# synth files of Q4_0, Q8_0, Q4_K, alternating the default level (avx512)
# with MINFER_CPU_LEVEL=avx2; then the kernel benchmarks (avx2 vs avx512).
# If a test fails, the benches use minfer-safe (the build call 1 verified)
# and say so. Run from the repository root with .device/avx512 carried.
set -o pipefail
R=$PWD; D=$R/.device/avx512; S=$OUT/summary.txt; B=$OUT/bench.txt
(cd $D && for f in *.gz; do gunzip -f "$f"; done; chmod +x minfer minfer-safe *.test)
echo "# $(date -u) built from $(cat $D/BUILT_FROM); $(grep -m1 'model name' /proc/cpuinfo); nproc $(nproc)" | tee $S
( for t in Q4_0 Q8_0 Q4_K; do t0=$SECONDS; timeout 60 $D/minfer synth --preset 1b --type $t -o /tmp/1b-$t.gguf > /dev/null 2>&1; echo "synth $t rc=$? $((SECONDS-t0))s" >> $OUT/synth.log; done ) &
SP=$!
FAILED=0
tst() { # label dir binary args...
  local lab=$1 dir=$2 bin=$3; shift 3
  (cd $dir && timeout 100 $D/$bin -test.v -test.count=1 "$@" > $OUT/$lab.txt 2>&1); local rc=$?
  echo "$lab rc=$rc ${SECONDS}s pass=$(grep -c -- '--- PASS' $OUT/$lab.txt) fail=$(grep -c -- '--- FAIL' $OUT/$lab.txt) skip=$(grep -c -- '--- SKIP' $OUT/$lab.txt)" | tee -a $S
  grep -E -- "--- FAIL|panic:" $OUT/$lab.txt | head -20 | tee -a $S
  [ $rc = 0 ] || FAILED=1
}
# (TestSynth*: files of testdata/synth, not carried; level-independent.)
tst quant-test core/quant quant.test -test.skip Synth
grep -A2 -E "TestAVX512OfferedWhenPresent" $OUT/quant-test.txt | head -4 | tee -a $S
tst cpu-test core/backend/cpu cpu.test
mkdir -p /tmp/td/synth; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s /tmp/td/$s; done
MINFER_TESTDATA=/tmp/td tst core-llamacpp core core.test -test.run LlamaCpp -test.skip GPU
M=minfer; [ $FAILED = 0 ] || { M=minfer-safe; echo "TESTS FAILED: benches use minfer-safe (call 1's build)" | tee -a $S; }
wait $SP; cat $OUT/synth.log | tee -a $S
echo "# $(date -u) binary $M" > $B
for t in Q4_0 Q8_0 Q4_K; do
  for lvl in default avx2; do
    cmd="$M bench -m /tmp/1b-$t.gguf -p 128 -n 64 -t 2 -r 3 --gpu-layers 0"
    if [ $lvl = default ]; then echo "## $t: $cmd" >> $B; env -u MINFER_CPU_LEVEL timeout 60 $D/$cmd >> $B 2>&1
    else echo "## $t: MINFER_CPU_LEVEL=$lvl $cmd" >> $B; MINFER_CPU_LEVEL=$lvl timeout 60 $D/$cmd >> $B 2>&1; fi
    echo "rc=$? ${SECONDS}s" >> $B
  done
done
cat $B | tee -a $S
(cd core/quant && for pat in 'Tile8/avx/Q/x2' 'Rows8/avx|Kernel/avx/Q[48]_[0K]/Dot4Rows$'; do timeout 25 $D/quant.test -test.run '^$' -test.bench "$pat" -test.benchtime 100ms -test.count 3; done > $OUT/kernel-bench.txt 2>&1; echo "kernel bench rc=$? ${SECONDS}s" | tee -a $S)
grep -E "^Benchmark" $OUT/kernel-bench.txt | tee -a $S
echo "total ${SECONDS}s" | tee -a $S
