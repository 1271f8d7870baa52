# the in-process A/B runs and per-op profiles of s18 (first batch)
D=/work/wt-cpu18/bench/results/2026-12-06-s18-cpu
M=/tmp/cpu18
cd $D
sh zab.sh $M/1b-Q4_0.gguf 10 one,x4 > zab-x4-q4_0-2.txt 2>&1
sh zab.sh $M/1b-Q4_K_M.gguf 10 one,x4 > zab-x4-q4km-1.txt 2>&1
for b in zprof zprof-head; do for t in Q4_0 Q4_K_M Q8_0; do
	q=$(sh ../2026-12-06-s15-cpu/quiet.sh)
	echo "== $q$b $t $(date +%T) load $(cat /proc/loadavg)" >> perop-1.txt
	MINFER_ZPROF=1 $M/minfer-$b bench -m $M/1b-$t.gguf -p 1 -n 256 -t 2 >> perop-1.txt 2>&1
done; done
