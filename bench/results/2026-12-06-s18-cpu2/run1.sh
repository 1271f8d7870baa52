# run1.sh: the batch as run (s18b): from-memory panels (Q4_K, Q6_K), in-process A/B, end to end.
D=/work/wt-cpu18b/bench/results/2026-12-06-s18-cpu2
W() { q=$(sh $D/../2026-12-06-s15-cpu/quiet.sh); w=0; while [ -n "$q" ] && [ $w -lt 4 ]; do q=$(sh $D/../2026-12-06-s15-cpu/quiet.sh); w=$((w+1)); done; echo "== $q$(date +%T) load $(cat /proc/loadavg)"; }
for b in ZQ4KPanels ZQ6KPanels; do
  (W; /tmp/cpu18b/quant.test -test.run '^$' -test.bench "Benchmark$b\$" -test.benchtime 1x; echo "== end $(date +%T) load $(cat /proc/loadavg)") > $D/$(echo $b | tr A-Z a-z)-2.txt 2>&1
done
sh $D/zab.sh /tmp/cpu18/1b-Q4_K_M.gguf 8 one,both,k4,k6 > $D/zab-q4km-1.txt; sh $D/zab.sh /tmp/cpu18/1b-Q4_K_M.gguf 8 both,both2,both8,one > $D/zab-q4km-panels-1.txt 2>&1 2>&1
sh $D/dec.sh /tmp/cpu18/1b-Q4_K_M.gguf 4 base panels > $D/dec-Q4_K_M.txt 2>&1
sh $D/dec.sh /tmp/cpu18/1b-Q4_K_M.gguf 4 panels base > $D/dec-Q4_K_M-rev.txt 2>&1
