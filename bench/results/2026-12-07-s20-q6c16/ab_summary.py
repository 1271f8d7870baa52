import json, glob, statistics as st, os
d = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ab')
rows = {'base': [], 'head': []}
print('%-14s %10s %10s %8s' % ('run', 'decode', 'mem GB/s', 'frac'))
for f in sorted(glob.glob(d + '/*.json')):
    j = json.load(open(f))
    b = 'head' if 'head' in f else 'base'
    rows[b].append((j['decode_tok_s'], j['decode_fraction_of_memory_bandwidth'], j['measured_memory_gb_s']))
    print('%-14s %10.2f %10.2f %8.3f' % (os.path.basename(f)[:-5], j['decode_tok_s'], j['measured_memory_gb_s'], j['decode_fraction_of_memory_bandwidth']))
for b, v in rows.items():
    print(b, 'n', len(v), 'median tok/s %.2f' % st.median(x[0] for x in v), 'median frac %.3f' % st.median(x[1] for x in v), 'median meter %.2f' % st.median(x[2] for x in v))
# paired: the same round and order
pairs = []
for f in sorted(glob.glob(d + '/*-base.json')):
    h = f.replace('-base', '-head')
    pairs.append(json.load(open(h))['decode_tok_s'] / json.load(open(f))['decode_tok_s'] - 1)
print('paired head/base-1: median %+.1f%%  (%s)' % (100 * st.median(pairs), ' '.join('%+.1f' % (100 * p) for p in pairs)))
