# s18's last batch: per-op profiles base/head alternating (Q4_0, Q8_0), then more side-by-side rounds
D=/work/wt-cpu18/bench/results/2026-12-06-s18-cpu
M=/tmp/cpu18
cd $D
for r in 1 2; do for t in Q4_0 Q8_0; do for b in zprof zprof-head; do
	q=$(sh ../2026-12-06-s15-cpu/quiet.sh)
	echo "== $q$b $t r$r $(date +%T) load $(cat /proc/loadavg)" >> perop-3.txt
	MINFER_ZPROF=1 $M/minfer-$b bench -m $M/1b-$t.gguf -p 1 -n 256 -t 2 >> perop-3.txt 2>&1
done; done; done
sh dec.sh $M/1b-Q8_0.gguf 3 base head > dec-final3-Q8_0.txt 2>&1
sh dec.sh $M/1b-Q8_0.gguf 3 head base > dec-final3-Q8_0-rev.txt 2>&1
sh dec.sh $M/1b-Q4_K_M.gguf 3 base head > dec-final3-Q4_K_M.txt 2>&1
sh dec.sh $M/1b-Q4_K_M.gguf 3 head base > dec-final3-Q4_K_M-rev.txt 2>&1
sh dec.sh $M/1b-Q4_0.gguf 2 base head > dec-final3-Q4_0.txt 2>&1
sh dec.sh $M/1b-Q4_0.gguf 2 head base > dec-final3-Q4_0-rev.txt 2>&1
echo done > run4.done
