# usage: pairs.sh BIN ROUNDS TYPE...: alternating minfer bench / llama-bench pairs on
# /tmp/h/1b-TYPE.gguf (pp128 / tg64, 2 threads), each run started once quiet.sh
# finds the machine quiet; the load average is printed before and after each run.
D=$(cd $(dirname $0) && pwd)
B=$1; R=$2; shift 2
L=/work/shared/tools/llama.cpp/llama-bench
[ -x $L ] || L=$(cd $D/../../../../shared/tools/llama.cpp 2>/dev/null && pwd)/llama-bench
for r in $(seq $R); do for t in "$@"; do
	M=/tmp/h/1b-$t.gguf
	q=$(sh $D/../2026-12-06-s15-cpu/quiet.sh)
	echo "== $t r$r minfer $(date +%T) $q load: $(cut -d' ' -f1-3 /proc/loadavg)"
	$B bench -m $M -p 128 -n 64 -t 2 -r 3 --json 2>&1
	echo "   end $(date +%T) load: $(cut -d' ' -f1-3 /proc/loadavg)"
	q=$(sh $D/../2026-12-06-s15-cpu/quiet.sh)
	echo "== $t r$r llama $(date +%T) $q load: $(cut -d' ' -f1-3 /proc/loadavg)"
	$L -m $M -p 128 -n 64 -t 2 2>&1
	echo "   end $(date +%T) load: $(cut -d' ' -f1-3 /proc/loadavg)"
done; done
