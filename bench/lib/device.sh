#!/bin/bash
# Shared preamble of the device-call scripts (bench/results/*/run.sh from session 22 on): source it from the
# repository root on the device machine with the carry folder as $1, e.g.
#   . bench/lib/device.sh .device/s22f
# It unpacks the carry's bins.tar.xz (xz, or Python's lzma where xz is missing), sets D (the carry), L ($OUT/logs)
# and S (the summary), writes the summary's first line (BUILT_FROM, date, GPU, driver, CPUs), and on exit writes
# the total time and packs the logs into $OUT/logs.tgz (snap does that at any point, so a call cut short still
# returns what it had). Helpers:
#   bn CMD...            a benchmark run (env assignments allowed first; timeout $BT, 120 s unset): its prefill/decode/device lines to the
#                        summary, the whole output to logs/gpu-bench.txt
#   tst NAME DIR T [VAR=value...] BIN ARGS...   a test binary run in DIR with timeout T (and -test.v
#                        -test.count=1): pass/fail/skip counts and the failures to the summary, the output to
#                        logs/NAME.txt
#   td                   testdata links for the core tests ($D/td: models small arch vocab templates)
#   synth8 / synth1      the 8B Q4_K / 1.1B Q4_0 synth models into /tmp (synth8 in the background: wait $SP)
R=$PWD; D=$R/$1; L=$OUT/logs; S=$L/summary.txt; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && dx bins.tar.xz && tar xf bins.tar && rm bins.tar && chmod +x $(ls | grep -v -x -e BUILT_FROM -e td))
snap() { cp $S $OUT/summary.txt; (cd $OUT && tar czf logs.tgz.tmp logs && mv logs.tgz.tmp logs.tgz); }
fin() { echo "total ${SECONDS}s" | tee -a $S; snap; rm -rf $OUT/logs; }
trap fin EXIT
echo "# built from $(cat $D/BUILT_FROM | tr '\n' ' '); $(date -u); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader); $(nproc) cpus" | tee $S
bn() { echo "## $*" | tee -a $S; timeout ${BT:-120} env "$@" > $L/b.txt 2>&1; echo "rc=$? ${SECONDS}s" >> $L/b.txt; grep -E "^prefill|^decode|^device|rc=|rror|panic" $L/b.txt | tee -a $S; cat $L/b.txt >> $L/gpu-bench.txt; }
tst() {
	local name=$1 dir=$2 t=$3; shift 3
	(cd $dir && timeout $t env "$@" -test.v -test.count=1 > $L/$name.txt 2>&1; echo "$name rc=$? ${SECONDS}s pass=$(grep -c -- '--- PASS' $L/$name.txt) fail=$(grep -c -- '--- FAIL' $L/$name.txt) skip=$(grep -c -- '--- SKIP' $L/$name.txt)" | tee -a $S)
	grep -E -- "--- FAIL|panic:" $L/$name.txt | head -20 | tee -a $S
	snap
}
td() { mkdir -p $D/td; for s in models small arch vocab templates; do ln -sfn $R/testdata/$s $D/td/$s; done; }
synth1() { timeout 60 $D/minfer synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > $L/synth.txt 2>&1; echo "synth1b rc=$? ${SECONDS}s" | tee -a $S; }
synth8() { (timeout 200 $D/minfer synth --preset 8b --type Q4_K -o /tmp/8b.gguf > $L/synth8.txt 2>&1; echo "synth8b rc=$? ${SECONDS}s" >> $L/synth8.txt) & SP=$!; }
