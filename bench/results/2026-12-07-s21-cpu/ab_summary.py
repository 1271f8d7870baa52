#!/usr/bin/env python3
"""Summarise ab/*.txt (TestZAB3 logs): for each run, the speed of arm B
relative to arm A (block-pair ratios of 8 timed steps, A and B alternating,
order swapped each pair), over all rounds and over the rounds whose meter
readings before and after both say slow (< 42 GB/s) or both fast (>= 48)."""
import re, glob, sys, statistics as st
files = sys.argv[1:] or sorted(glob.glob('ab/*.txt'))
print('| run | start | model | knob A -> B | rounds | all: B/A pairs median (quartiles) | slow rounds: median | fast rounds: median |')
print('|---|---|---|---|---|---|---|---|')
for f in files:
    txt = open(f).read()
    head = txt.splitlines()[0]
    m = re.match(r'# (\S+) model=(\S+) knob=(\S+) A=(\S+) B=(\S+)', head)
    start, model, knob, a, b = m.groups() if m else ('?',) * 5
    res = {}
    for mm in re.finditer(r'(all|slow|fast) \((\d+) rounds\): knob [^:]*: speed B/A block pairs median ([\d.]+) quartiles ([\d.]+) ([\d.]+)', txt):
        res[mm.group(1)] = (int(mm.group(2)), float(mm.group(3)), float(mm.group(4)), float(mm.group(5)))
    if 'all' not in res:
        continue
    fmt = lambda k: '%.3f (%d)' % (res[k][1], res[k][0]) if k in res else '—'
    print('| %s | %s | %s | %s %s -> %s | %d | %.3f (%.3f–%.3f) | %s | %s |' % (f.split('/')[-1][:-4], start, model, knob, a, b, res['all'][0], res['all'][1], res['all'][2], res['all'][3], fmt('slow'), fmt('fast')))
