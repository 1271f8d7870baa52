# run-layouts.sh N: N runs of BenchmarkMemDecodeLayouts (test binary /tmp/quant2.test,
# built from this branch; layouts-4: at 8f384a2, no prefetch lead for Q4_0/Q8_0 on AMD), each started once quiet.sh finds the machine quiet,
# then one BenchmarkMemDecodeCol16/Q4_0 (c16 prefetch distances against x8).
D=$(cd $(dirname $0) && pwd)
cd /work/cpu2/core/quant
for i in $(seq $1); do
	q=$(sh $D/../2026-12-06-s15-cpu/quiet.sh)
	echo "== run $i $(date +%T) $q load: $(cut -d' ' -f1-3 /proc/loadavg)"
	/tmp/quant2.test -test.run XXX -test.bench MemDecodeLayouts -test.benchtime 1x 2>&1 | grep -v '^goos\|^goarch\|^pkg\|^cpu:'
	echo "   end $(date +%T) load: $(cut -d' ' -f1-3 /proc/loadavg)"
done
