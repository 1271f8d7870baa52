#!/bin/bash
# Builds a device carry (bench/lib/device.sh's layout) from the repository root:
#   bash bench/lib/build.sh NAME BASE_REV [ALT_REV]
# .device/NAME/bins.tar.xz holds minfer-base (BASE_REV, built in a scratch worktree), minfer-alt (ALT_REV, when
# given: a third binary to compare; ~3.4 MB more, which took session 25's tree past the device's 64 MiB), and
# minfer, cuda.test, core.test of the working tree; BUILT_FROM says which. Stripped, CGO_ENABLED=0, -tags nogui
# for minfer. ALT_TESTS=1 adds cuda-alt.test, the cuda package's tests at ALT_REV (run it from the alt's tree:
# its PTX tests read the .cu sources beside them).
set -e
export PATH=$PATH:/usr/local/go/bin CGO_ENABLED=0
name=$1 base=$2 alt=${3:-}; C=.device/$name; R=$PWD
rm -rf $C; mkdir -p $C
# other REV OUT: minfer at REV (a scratch worktree) into $C/OUT.
other() {
	rm -rf /tmp/build-other
	git worktree add -q -f --detach /tmp/build-other $1
	(cd /tmp/build-other && go build -tags nogui -ldflags="-s -w" -o $R/$C/$2 .)
	[ -z "$3" ] || (cd /tmp/build-other && go test -c -ldflags="-s -w" -o $R/$C/$3 ./core/backend/cuda/)
	git worktree remove -f /tmp/build-other
}
other $base minfer-base
bins="minfer-base minfer cuda.test core.test"
if [ -n "$alt" ] && [ -n "${ALT_TESTS:-}" ]; then other $alt minfer-alt cuda-alt.test; bins="$bins minfer-alt cuda-alt.test"
elif [ -n "$alt" ]; then other $alt minfer-alt; bins="$bins minfer-alt"; fi
go build -tags nogui -ldflags="-s -w" -o $C/minfer .
go test -c -ldflags="-s -w" -o $C/cuda.test ./core/backend/cuda/
go test -c -ldflags="-s -w" -o $C/core.test ./core/
head=$(git rev-parse --short HEAD); dirty=$(git status --porcelain --untracked-files=no | grep -q . && echo "+changes" || true)
printf 'base: %s\nhead (minfer, cuda.test, core.test): %s%s\n' "$(git rev-parse --short $base)" "$head" "$dirty" > $C/BUILT_FROM
[ -z "$alt" ] || printf 'alt (minfer-alt): %s\n' "$(git rev-parse --short $alt)" >> $C/BUILT_FROM
(cd $C && tar cf bins.tar $bins && rm $bins && xz -9 -T1 bins.tar)
du -sh $C
