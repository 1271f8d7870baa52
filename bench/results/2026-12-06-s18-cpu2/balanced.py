# usage: python3 balanced.py A B FILE...: dec.sh files run in both orders (A first, then B
# first): every round's B/A ratio, their median and geometric mean, and each spec's median
# tok/s and roofline fraction over all the files.
import re, sys, math, statistics as st
a, b = sys.argv[1:3]
ratios, vals = [], {a: [], b: []}
for f in sys.argv[3:]:
    rows = {}
    for line in open(f):
        m = re.match(r'(?:\(busy\) )?(\S+) r(\d+) .* ([\d.]+) tok/s roofline ([\d.]+) mem ([\d.]+)', line)
        if m:
            rows.setdefault(m.group(1), {})[int(m.group(2))] = (float(m.group(3)), float(m.group(4)), float(m.group(5)))
    for r in sorted(rows.get(a, {})):
        if r in rows.get(b, {}):
            ratios.append(rows[b][r][0] / rows[a][r][0])
    for s in (a, b):
        vals[s] += rows.get(s, {}).values()
print('%s/%s over %d rounds: %s' % (b, a, len(ratios), ' '.join('%.3f' % x for x in ratios)))
print('median %.3f, geometric mean %.3f' % (st.median(ratios), math.exp(sum(map(math.log, ratios)) / len(ratios))))
for s in (a, b):
    v = vals[s]
    print('%s: median tok/s %.2f, roofline %.3f, meter %.1f GB/s (%d runs)' % (s, st.median(x[0] for x in v), st.median(x[1] for x in v), st.median(x[2] for x in v), len(v)))
