# s18's final side-by-side decode runs (dec.sh, both orders) and per-op profiles
D=/work/wt-cpu18/bench/results/2026-12-06-s18-cpu
M=/tmp/cpu18
cd $D
for t in Q4_0 Q8_0; do
	sh dec.sh $M/1b-$t.gguf 3 base head > dec-final-$t.txt 2>&1
	sh dec.sh $M/1b-$t.gguf 3 head base > dec-final-$t-rev.txt 2>&1
done
sh dec.sh $M/1b-Q4_K_M.gguf 2 base head > dec-final-Q4_K_M.txt 2>&1
sh dec.sh $M/1b-Q4_K_M.gguf 2 head base > dec-final-Q4_K_M-rev.txt 2>&1
for b in zprof zprof-head; do for t in Q4_0 Q8_0; do
	q=$(sh ../2026-12-06-s15-cpu/quiet.sh)
	echo "== $q$b $t $(date +%T) load $(cat /proc/loadavg)" >> perop-2.txt
	MINFER_ZPROF=1 $M/minfer-$b bench -m $M/1b-$t.gguf -p 1 -n 256 -t 2 >> perop-2.txt 2>&1
done; done
echo done > run2.done
