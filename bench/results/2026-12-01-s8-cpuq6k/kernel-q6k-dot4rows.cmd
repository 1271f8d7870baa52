# built from the worktree at the commit that adds q6_Kq8_Kr4AVX512
cd core/quant && go test -c -o /tmp/quant.test .
for i in 1 2 3 4; do for l in avx2 avx512; do
  /tmp/quant.test -test.run '^$' -test.bench "BenchmarkKernel/$l/Q6_K/Dot4Rows\$" -test.benchtime=200000x -test.count=1 | grep Dot4Rows
done; done
# fourrow-q6k-bench.txt (final kernel, BenchmarkFourRowQ6_K):
for i in 1 2 3; do for l in avx2 avx512; do
  /tmp/quant.test -test.run '^$' -test.bench "BenchmarkFourRowQ6_K/$l/" -test.benchtime=100000x | grep FourRow
done; done
