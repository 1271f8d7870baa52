# usage: zab.sh MODEL ROUNDS v1,v2,...: s17's in-process A/B harness (core/zab_tmp_test.go, build tag zab,
# binary ${ZAB_TEST:-/tmp/cpu18b/zab.test} built by build-zab.sh): one session, 256 decode steps a round, the variants
# alternating every 8 steps; waits for quiet.sh first (up to five tries, as dec.sh) and logs the load.
D=$(dirname $0)
q=$(sh $D/../2026-12-06-s15-cpu/quiet.sh); w=0
while [ -n "$q" ] && [ $w -lt 4 ]; do q=$(sh $D/../2026-12-06-s15-cpu/quiet.sh); w=$((w+1)); done
echo "== $q$(date +%T) load $(cat /proc/loadavg)"
MINFER_AB_MODEL=$1 MINFER_AB_ROUNDS=$2 MINFER_AB=$3 ${ZAB_TEST:-/tmp/cpu18b/zab.test} -test.run 'TestZAB$' -test.v -test.count=1 2>&1 | grep -v "^=== RUN\|^--- PASS\|^PASS\|^ok"
echo "== end $(date +%T) load $(cat /proc/loadavg)"
