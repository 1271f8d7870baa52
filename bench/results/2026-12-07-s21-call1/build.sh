#!/bin/bash
# Builds .device/s21a for run.sh (from the repository root, on the CPU machine): main's minfer, cuda.test, core.test
# and the same three from main + np21.patch (s20's np20.patch, the norm prologue, rebased on main 1b3e37a) with the PTX regenerated.
# Needs nvcc 11.8 at /usr/bin/nvcc (Debian non-free nvidia-cuda-toolkit; the lead's notes say how to install it).
set -eu
export PATH=$PATH:/usr/local/go/bin
R=$PWD; D=$R/.device/s21a; W=/tmp/np-build
rm -rf "$D" && mkdir -p "$D"
CGO_ENABLED=0 go build -tags nogui -ldflags="-s -w" -o "$D/minfer" .
CGO_ENABLED=0 go test -c -ldflags="-s -w" -o "$D/cuda.test" ./core/backend/cuda
CGO_ENABLED=0 go test -c -ldflags="-s -w" -o "$D/core.test" ./core
git worktree remove --force "$W" 2>/dev/null || true
git worktree add -q --detach "$W" HEAD
(cd "$W" && git apply "$R/bench/results/2026-12-07-s21-call1/np21.patch" && NVCC=/usr/bin/nvcc sh core/backend/cuda/kernels/generate.sh &&
	CGO_ENABLED=0 go build -tags nogui -ldflags="-s -w" -o "$D/minfer-np" . &&
	CGO_ENABLED=0 go test -c -ldflags="-s -w" -o "$D/cuda-np.test" ./core/backend/cuda &&
	CGO_ENABLED=0 go test -c -ldflags="-s -w" -o "$D/core-np.test" ./core &&
	CGO_ENABLED=0 go test -count=1 -run TestPTXMatchesSources ./core/backend/cuda)
git worktree remove --force "$W"
echo "main $(git rev-parse --short HEAD); np: main + np21.patch, PTX regenerated" > "$D/BUILT_FROM"
cd "$D" && tar cf bins.tar minfer cuda.test core.test minfer-np cuda-np.test core-np.test && xz -9 -T2 bins.tar &&
	rm minfer cuda.test core.test minfer-np cuda-np.test core-np.test && ls -la
