# build-zab.sh OUT: the in-process A/B test binary (s17's harness, core/zab_tmp_test.go, + s18's knobs) of the worktree's code
set -e
cd /work/wt-cpu18
cp /tmp/cpu18/zab/zab_tmp_test.go /tmp/cpu18/zab/zab_knobs_test.go core/
cp /tmp/cpu18/zab/zab_knob_quant.go core/quant/
cp /tmp/cpu18/zab/zab_knob_cpu.go core/backend/cpu/
CGO_ENABLED=0 /usr/local/go/bin/go test -c -tags zab -o $1 ./core/ || true
rm core/zab_tmp_test.go core/zab_knobs_test.go core/quant/zab_knob_quant.go core/backend/cpu/zab_knob_cpu.go
