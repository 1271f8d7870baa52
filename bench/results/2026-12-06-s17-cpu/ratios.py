# usage: python3 ratios.py FILE A B: per round, tok/s of B over A (dec.sh output) and the
# median; also the medians of each spec's tok/s and roofline fraction.
import re, sys, statistics as st
f, a, b = sys.argv[1:4]
rows = {}
for line in open(f):
    m = re.match(r'(?:\(busy\) )?(\S+) r(\d+) .* ([\d.]+) tok/s roofline ([\d.]+) mem ([\d.]+)', line)
    if m:
        rows.setdefault(m.group(1), {})[int(m.group(2))] = (float(m.group(3)), float(m.group(4)), float(m.group(5)))
ra = [rows[b][r][0] / rows[a][r][0] for r in sorted(rows[a]) if r in rows.get(b, {})]
print('per-round %s/%s:' % (b, a), ' '.join('%.3f' % x for x in ra), ' median %.3f' % st.median(ra))
for s in (a, b):
    v = rows[s].values()
    print('%s: median tok/s %.2f, roofline %.3f, meter %.1f (%d rounds)' % (s, st.median(x[0] for x in v), st.median(x[1] for x in v), st.median(x[2] for x in v), len(rows[s])))
