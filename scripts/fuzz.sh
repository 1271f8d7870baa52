#!/usr/bin/env bash
# Runs every fuzz target in the repository (or those matching a pattern) for
# a set time each, one after another, and prints what each one did.
#
#   scripts/fuzz.sh [-t 10m] [-p 1] [PATTERN]
#
# -t  time per target (go test's -fuzztime: 10m, 30s, or 100000x)
# -p  fuzzing workers per target (go test's -parallel)
# PATTERN  extended regexp matched against "pkg/FuzzName"
#
# A crasher is written by go test under the package's testdata/fuzz/FuzzName/;
# commit it: plain `go test` then runs it as a regression case (CI runs every
# seed corpus that way). The script exits non-zero if any target failed.
set -uo pipefail
cd "$(dirname "$0")/.."

fuzztime=10m
parallel=1
while getopts "t:p:" opt; do
	case $opt in
	t) fuzztime=$OPTARG ;;
	p) parallel=$OPTARG ;;
	*) echo "usage: $0 [-t 10m] [-p 1] [PATTERN]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
pattern=${1:-.}

export PATH="$PATH:/usr/local/go/bin"

# Every "func FuzzX(f *testing.F)" in a _test.go file, as "dir FuzzX".
targets=$(grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+\(' . |
	sed -E 's#^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]+)\($#\1 \2#' | sort -u)

failed=0
while read -r dir name; do
	[ -n "$dir" ] || continue
	echo "$dir/$name" | grep -Eq -- "$pattern" || continue
	echo "=== $dir $name ($fuzztime, -parallel $parallel)"
	log=$(mktemp)
	start=$(date +%s)
	if go test "./$dir" -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" -parallel "$parallel" >"$log" 2>&1; then
		status=ok
	else
		status=FAILED
		failed=1
	fi
	# The last progress line carries the totals: "execs: N (r/sec), new interesting: M (total: T)".
	last=$(grep -E 'fuzz: elapsed' "$log" | tail -1)
	echo "$status $dir $name $(( $(date +%s) - start ))s ${last#*fuzz: }"
	if [ $status = FAILED ]; then
		tail -40 "$log"
	fi
	rm -f "$log"
done <<<"$targets"
exit $failed
