# run2.sh: end to end, base (main 2b183f6) vs panels (79faf8d: Q4_K and Q6_K panel kernels, P = 4), both orders.
D=/work/wt-cpu18b/bench/results/2026-12-06-s18-cpu2
sh $D/dec.sh /tmp/cpu18/1b-Q4_K_M.gguf 3 base panels > $D/dec-Q4_K_M.txt 2>&1
sh $D/dec.sh /tmp/cpu18/1b-Q4_K_M.gguf 3 panels base > $D/dec-Q4_K_M-rev.txt 2>&1
