#!/usr/bin/env python3
# Per-kernel comparison of two SASS listings (cuobjdump -sass of ptxas -arch=sm_90 cubins of the PTX before
# and after the softmax_weights refactor): which kernels changed, and for those the count of each opcode
# before/after, floating-point opcodes listed apart (a change of arithmetic would show there).
import re, sys, collections
FP = re.compile(r'^(FADD|FMUL|FFMA|DADD|DMUL|DFMA|MUFU|F2F|I2F|F2I|FSETP|DSETP|FMNMX|FCHK|FSEL|HADD2|HMUL2)')
def load(path):
    cur, d = None, {}
    for line in open(path):
        m = re.search(r'Function : (\S+)', line)
        if m:
            cur = m.group(1); d[cur] = []; continue
        t = line.split()
        if cur and t:
            d[cur].append(t[1] if t[0].startswith('@') else t[0])
    return d
for f in sys.argv[1:]:
    old, new = load(f + '-old.sass'), load(f + '-new.sass')
    for k in sorted(old):
        if old[k] == new.get(k):
            continue
        a, b = collections.Counter(old[k]), collections.Counter(new[k])
        fp = {o: (a[o], b[o]) for o in set(a) | set(b) if FP.match(o) and a[o] != b[o]}
        print(f'{f} {k}: {len(old[k])} -> {len(new[k])} instructions; floating-point opcode counts that differ: {fp or "none"}')
    print(f'{f}: {len(old)} kernels compared')
