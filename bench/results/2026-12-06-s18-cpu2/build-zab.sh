# build-zab.sh OUT: the in-process A/B test binary (s17's harness, core/zab_tmp_test.go, + s18b's knobs) of the worktree's code
set -e
cd /work/wt-cpu18b
cp /tmp/cpu18b/zab/zab_tmp_test.go /tmp/cpu18b/zab/zab_knobs_test.go core/
cp /tmp/cpu18b/zab/zab_knob_quant.go core/quant/
CGO_ENABLED=0 /usr/local/go/bin/go test -c -tags zab -o $1 ./core/ || true
rm core/zab_tmp_test.go core/zab_knobs_test.go core/quant/zab_knob_quant.go
