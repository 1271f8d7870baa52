# s18's last batch: in-process A/B of the four-group kernels (Q8_0, Q4_0) and more side-by-side
# rounds for Q4_K_M (whose code path the branch does not change) and Q4_0/Q8_0
D=/work/wt-cpu18/bench/results/2026-12-06-s18-cpu
M=/tmp/cpu18
cd $D
sh zab.sh $M/1b-Q8_0.gguf 10 one,x4 > zab-x4-q8_0-3.txt 2>&1
sh zab.sh $M/1b-Q4_0.gguf 10 one,x4 > zab-x4-q4_0-6.txt 2>&1
sh dec.sh $M/1b-Q4_K_M.gguf 3 base head > dec-final2-Q4_K_M.txt 2>&1
sh dec.sh $M/1b-Q4_K_M.gguf 3 head base > dec-final2-Q4_K_M-rev.txt 2>&1
for t in Q4_0 Q8_0; do
	sh dec.sh $M/1b-$t.gguf 2 base head > dec-final2-$t.txt 2>&1
	sh dec.sh $M/1b-$t.gguf 2 head base > dec-final2-$t-rev.txt 2>&1
done
echo done > run3.done
