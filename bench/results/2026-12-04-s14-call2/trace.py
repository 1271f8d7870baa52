#!/usr/bin/env python3
# Reads an `nsys stats --report cuda_gpu_trace --format csv` export and prints, for the last decode steps,
# each kernel's mean duration and mean gap to the previous kernel's end (negative: they overlapped), and
# the busy/idle split of the window. Usage: trace.py trace.csv [kernels]
import csv, sys, collections
rows = []
with open(sys.argv[1]) as f:
    lines = f.read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"Start') or l.startswith('Start'))
for r in csv.DictReader(lines[start:]):
    name = r.get('Name', '')
    if not name or 'memcpy' in name.lower() or 'memset' in name.lower():
        continue
    try:
        s, d = int(r['Start (ns)']), int(r['Duration (ns)'])
    except (KeyError, ValueError):
        continue
    rows.append((s, d, name.split('(')[0]))
rows.sort()
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
w = rows[-n:]
agg = collections.defaultdict(lambda: [0, 0.0, 0.0])
prev_end = None
busy_end = w[0][0]
busy = 0
for s, d, name in w:
    a = agg[name]
    a[0] += 1
    a[1] += d
    if prev_end is not None:
        a[2] += s - prev_end
    prev_end = s + d
    e = s + d
    if e > busy_end:
        busy += e - max(s, busy_end)
        busy_end = e
span = w[-1][0] + w[-1][1] - w[0][0]
print(f"window: {len(w)} kernels over {span/1e3:.1f} us; some kernel running {busy/1e3:.1f} us ({100*busy/span:.1f}%)")
print(f"{'kernel':32s} {'n':>5s} {'mean us':>8s} {'mean gap us':>11s} {'total us':>9s}")
for name, (c, d, g) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
    print(f"{name:32s} {c:5d} {d/c/1e3:8.2f} {g/c/1e3:11.2f} {d/1e3:9.1f}")
