#!/usr/bin/env python3
"""Print every dec*/dec-TYPE-rN.json (minfer bench -p 1 -n 64 -t 2 --json) in run order."""
import json, glob, sys
dirs = sys.argv[1:] or sorted(glob.glob('dec*/'))
print('| dir | run | start (UTC) | type | decode tok/s | weights GB/s | meter samples (before, after) | fraction of the meter |')
print('|---|---|---|---|---|---|---|---|')
for d in dirs:
    fs = sorted(glob.glob(d.rstrip('/') + '/dec-*.json'), key=lambda f: open(f[:-5] + '.time').read())
    for f in fs:
        j = json.load(open(f))
        t = open(f[:-5] + '.time').read().strip()
        name = f.split('/')[-1][4:-5]
        typ, r = name.rsplit('-', 1)
        print('| %s | %s | %s | %s | %.2f | %.1f | %s | %.3f |' % (d.rstrip('/'), r, t, typ.upper(), j['decode_tok_s'], j['decode_weight_gb_s'],
              ' / '.join('%.1f' % x for x in j['measured_memory_gb_s_samples']), j['decode_fraction_of_memory_bandwidth']))
