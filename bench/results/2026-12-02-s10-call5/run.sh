#!/bin/bash
# Session 10, H200 call 5 (issue 11): call4's TestFlashAttention failed with CUDA_ERROR_ILLEGAL_ADDRESS from its
# first case (head size 64, the unchanged kernel) and the wide kernel's bench faulted: TestFlashAttention of
# the build before fattn_f16_128w (cuda-old.test, 3ecc4ce) and of HEAD (cuda.test), each alone, then HEAD's
# first failing case under compute-sanitizer where the machine has it. Logs: $OUT.
R=$PWD; D=$R/.device/s10e; L=/tmp/L; mkdir -p $L
dx() { if command -v xz >/dev/null; then xz -d -f "$1"; else python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1" && rm -f "$1"; fi; }
(cd $D && for f in *.xz; do dx $f; done; chmod +x cuda.test cuda-old.test)
S=$OUT/summary.txt
echo "# $(date -u); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee $S
cd core/backend/cuda
for b in cuda-old cuda; do
  timeout 60 $D/$b.test -test.v -test.count=1 -test.run 'TestFlashAttention' > $L/$b-fa.txt 2>&1
  echo "$b TestFlashAttention rc=$? pass=$(grep -c -- '--- PASS' $L/$b-fa.txt) fail=$(grep -c -- '--- FAIL' $L/$b-fa.txt)" | tee -a $S
  grep -m3 -E "ILLEGAL|fattn_test" $L/$b-fa.txt | tee -a $S
done
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
echo "compute-sanitizer: ${CS:-none}" | tee -a $S
if [ -n "$CS" ]; then
  timeout 150 $CS --print-limit 5 $D/cuda.test -test.v -test.count=1 -test.run 'TestFlashAttention/nokeepfalse/widefalse/hd64/h8-kv2/past0/' > $L/cs.txt 2>&1; echo "sanitizer rc=$?" | tee -a $S
  grep -m12 -E "Invalid|at 0x|by thread|Address|kernel|fattn|attn_used|ERROR SUMMARY" $L/cs.txt | tee -a $S
fi
tar czf $OUT/logs.tgz -C $L .
