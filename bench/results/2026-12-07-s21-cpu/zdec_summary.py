#!/usr/bin/env python3
"""Summarise zdec/*.txt (TestZDec logs): per file and arm (v0 = A, v1 = B),
blocks whose meter readings before and after are both < 42 GB/s (slow) or
both >= 48 (fast): medians of the decode fraction of the meter (mean of the
two readings), the mat-vec phase's fraction, the mat-vec share of the step,
the ms per step outside the mat-vec pool calls, and the two threads' own
stream rates inside their mat-vec chunks (GB/s each)."""
import re, sys, glob, statistics as st
pat = re.compile(r'v(\d) blk +(\d+) meter +([\d.]+) +([\d.]+) +step +([\d.]+) ms +matwall +([\d.]+) \(([\d.]+)\) +kern +([\d.]+) +([\d.]+) +out +([\d.]+) ms +dec +([\d.]+) GB/s frac ([\d.]+) +matphase +([\d.]+) GB/s kfrac ([\d.]+).*thr GB/s ([\d.]+) ([\d.]+) share0 ([\d.]+)')
files = sys.argv[1:] or sorted(glob.glob('zdec/*.txt'))
print('| file | arm | state | blocks | meter (median) | decode frac | mat-phase frac | mat share of step | outside mat-vec ms | step ms | thread GB/s in chunks (0 / 1) |')
print('|---|---|---|---|---|---|---|---|---|---|---|')
for f in files:
    head = open(f).readline().strip()
    rows = [m.groups() for m in map(pat.search, open(f)) if m]
    for v in '01':
        for name, lo, hi in (('slow', 0, 42), ('fast', 48, 1e9)):
            r = [x for x in rows if x[0] == v and lo <= float(x[2]) < hi and lo <= float(x[3]) < hi]
            if not r:
                continue
            md = lambda i: st.median(float(x[i]) for x in r)
            print('| %s | %s | %s | %d | %.1f | %.3f | %.3f | %.3f | %.2f | %.2f | %.1f / %.1f |' % (
                f.split('/')[-1], v, name, len(r), st.median((float(x[2]) + float(x[3])) / 2 for x in r),
                md(11), md(13), md(6), md(9), md(4), md(14), md(15)))
