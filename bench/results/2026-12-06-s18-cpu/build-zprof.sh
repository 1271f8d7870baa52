# build-zprof.sh OUT: the per-op timing build (s16's instrumentation + s18's per-thread stats) of the worktree's code
set -e
cd /work/wt-cpu18
git apply $(dirname $0)/perop-instrumentation-hooks.diff
cp $(dirname $0)/perop-instrumentation.go.txt core/backend/cpu/zprof_tmp.go
CGO_ENABLED=0 /usr/local/go/bin/go build -tags "nogui zprof" -o $1 . || true
git apply -R $(dirname $0)/perop-instrumentation-hooks.diff
rm core/backend/cpu/zprof_tmp.go
