# ab.sh: T=Q4_K_M (default) and T=Q6_K (model: /tmp/minfer-main synth --preset 1b --type Q6_K -o /tmp/s8models/synth-1b-Q6_K.gguf)
bench/results/2026-12-01-s8-cpuq6k/ab.sh
T=Q6_K bench/results/2026-12-01-s8-cpuq6k/ab.sh
# mmap-vs-heap-q6k.txt: mmap-vs-heap-q6k_test.go.txt copied into core/quant as zz_mmap_tmp_test.go
# (removed after the run), go test -c -o /tmp/quant-mm.test ., then
for i in 1 2 3; do for l in avx2 avx512; do echo "level=$l"
  MINFER_CPU_LEVEL=$l Q6K_FILE=/tmp/s8models/synth-1b-Q6_K.gguf /tmp/quant-mm.test -test.run '^$' -test.bench ZZQ6KMmap -test.benchtime=20x | grep ZZ
done; done
# q6k-tensors-of-q4km-file.txt: q6k-tensors-of-q4km-file_test.go.txt likewise, then
Q6K_FILE=/tmp/s8models/synth-1b-Q4_K_M.gguf /tmp/quant-mm2.test -test.run '^$' -test.bench ZZQ6KFile -test.benchtime=30x
