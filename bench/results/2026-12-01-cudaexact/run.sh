#!/bin/bash
# Device check (helper cudaexact, issue 11): bit-exact prefill kernels.
# Run from the repository root with .device/cudaexact carried (core.test.gz,
# cuda.test.gz built from branch cudaexact with
# `CGO_ENABLED=0 go test -c -ldflags="-s -w"` for ./core and
# ./core/backend/cuda). Logs under $OUT; about 2 minutes at most.
#  1. every CUDA op test (flash attention, mmq: "N differ from the CPU's
#     bits" in each compareWithin line; 0 expected);
#  2. the GPU model tests (TestGPUPrefillMatchesCPU now holds the batched
#     prefill to gpuVsCPUBound 1e-8 against the CPU and to the reference
#     bound against llama.cpp);
#  3. TestGPUPrefillMatchesCPU with MINFER_CUDA_FATTN=0, then MINFER_CUDA_MMQ=0.
R=$PWD
D=$R/.device/cudaexact
OUT=${OUT:-/tmp/cudaexact-out}
mkdir -p "$OUT"
(cd "$D" || exit 1; for f in *.gz; do gunzip -f "$f"; done; chmod +x core.test cuda.test) || exit 1
export MINFER_TESTDATA=$R/testdata
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/nvidia-smi.txt" 2>&1
S=$OUT/summary.txt
: > "$S"
t0=$(date +%s)
(cd core/backend/cuda && timeout 55 "$D/cuda.test" -test.v -test.count=1 -test.skip 'NoDriver|TestPTXMatchesSources' > "$OUT/cuda-op-test.txt" 2>&1; echo "cuda.test rc=$? $(( $(date +%s)-t0 )) s" >> "$S")
grep -cE -- "--- PASS" "$OUT/cuda-op-test.txt" >> "$S"
grep -E -- "--- FAIL|panic" "$OUT/cuda-op-test.txt" | head -20 >> "$S"
grep -E "differ from the CPU's bits" "$OUT/cuda-op-test.txt" | grep -vE " 0 differ" | head -20 >> "$S"
t1=$(date +%s)
(cd core && timeout 45 "$D/core.test" -test.v -test.count=1 -test.run 'GPU' > "$OUT/core-gpu-test.txt" 2>&1; echo "core.test GPU rc=$? $(( $(date +%s)-t1 )) s" >> "$S")
grep -E -- "^--- |^    --- FAIL|panic|positions," "$OUT/core-gpu-test.txt" | head -40 >> "$S"
for v in MINFER_CUDA_FATTN=0 MINFER_CUDA_MMQ=0; do
  t2=$(date +%s)
  (cd core && env $v timeout 20 "$D/core.test" -test.v -test.count=1 -test.run 'TestGPUPrefillMatchesCPU' > "$OUT/prefill-$v.txt" 2>&1; echo "prefill $v rc=$? $(( $(date +%s)-t2 )) s" >> "$S")
  grep -E -- "^--- |^    --- FAIL|panic|positions," "$OUT/prefill-$v.txt" >> "$S"
done
cat "$S"
