#!/bin/bash
# A/B in one run: attention score phase, thread per score (old) vs warp per score (new); 1.1B Q4_0, all on GPU.
D=$PWD/.device/ab
(cd $D && gunzip -f *.gz && chmod +x minfer-old minfer-new)
B=$OUT/ab.txt
$D/minfer-new synth --preset 1b --type Q4_0 -o /tmp/1b.gguf > /dev/null 2>&1
for r in 1 2 3; do for v in old new; do
  echo "## round $r: minfer-$v bench -m 1b-q4_0.gguf -p 512 -n 128 --gpu-layers 23" >> $B
  timeout 40 $D/minfer-$v bench -m /tmp/1b.gguf -p 512 -n 128 --gpu-layers 23 2>&1 | grep -E "prefill|decode" >> $B
done; done
cat $B
