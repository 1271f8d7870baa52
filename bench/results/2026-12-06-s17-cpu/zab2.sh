# usage: zab2.sh MODEL ROUNDS [C16MAX]: the two-session A/B harness (core/zab2_tmp_test.go,
# build tag zab): session 0 with every col16 weight, session 1 with weights whose col16
# group exceeds C16MAX bytes (default 32768) in x8; idle prefetch off in both; blocks of 8
# steps alternate between the sessions. Waits for quiet.sh first and logs the load.
D=$(dirname $0)
q=$(sh $D/../2026-12-06-s15-cpu/quiet.sh)
echo "== $q$(date +%T) load $(cat /proc/loadavg)"
MINFER_AB_MODEL=$1 MINFER_AB_ROUNDS=$2 MINFER_AB_C16MAX=$3 /tmp/h17/zab.test -test.run 'TestZAB2$' -test.v -test.count=1 2>&1 | grep -v "^=== RUN\|^--- PASS\|^PASS\|^ok"
echo "== end $(date +%T) load $(cat /proc/loadavg)"
