# Prefetch variants of q6_Kq8_Kr4AVX512 (sources in prefetch-variants/, copied
# into core/quant as pfvar_amd64.s / pfvar_amd64_test.go for the runs, then removed):
#   none     no software prefetch
#   aheadD   each row's own super-block D blocks ahead (4 lines per row)
#   streamK  840 bytes per super-block of the region 4K rows on from the first row
#            (stream1 = the AVX2 kernel's scheme: the next call's rows)
#   avx2     q6_Kq8_Kr4AVX2 as on main
# t1: 54 MiB of 2048-element rows on one thread; t2: 256 MiB split in two halves, two threads.
cd core/quant && go test -c -o /tmp/quant-pf.test .
# raw:  7 variants, 3 rounds, order reversed each round
V="avx2 none ahead2 ahead4 ahead8 stream1 stream2"
for round in 1 2 3; do for v in $V; do /tmp/quant-pf.test -test.run '^$' -test.bench "BenchmarkPFVariants/$v/" -test.benchtime=60x | grep PFVariants; done; V=$(echo $V | awk '{for(i=NF;i>0;i--) printf "%s ", $i}'); done
# raw2: V="stream1 stream2 avx2", 5 rounds;  raw3: V="stream1 stream2 stream3 stream4 avx2", 4 rounds
# raw4: t2 only, V="stream1 stream2 avx2" rotated each round, 6 rounds, -test.benchtime=100x
# matvec-dram-q6k.txt: the final kernel (stream2) through the level's Dot4Rows:
for i in 1 2 3; do for l in avx2 avx512; do
  /tmp/quant.test -test.run '^$' -test.bench "BenchmarkMatVecDRAM2/$l/Q6_K" -test.benchtime=60x | grep MatVec
  /tmp/quant.test -test.run '^$' -test.bench "BenchmarkMatVecDRAM/$l/Q6_K/Dot4Rows" -test.benchtime=60x | grep MatVec
done; done
