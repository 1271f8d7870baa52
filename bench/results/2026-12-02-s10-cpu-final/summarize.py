#!/usr/bin/env python3
# Table of a raw/ directory: prefill / decode tok/s per round, minfer's weight GB/s and roofline
# fraction (decode GB/s of weights against the meter's readings around the decode runs), llama-bench's
# avg_ts; medians per binary, and the decode ratio of each minfer binary to llama-bench's median.
import json, glob, re, sys, statistics as st
d = sys.argv[1] if len(sys.argv) > 1 else 'raw'
rows = {}
for f in sorted(glob.glob(d + '/*.json')):
    T, r, who = re.match(r'.*/(.+)-r(\d+)-(\w+)\.json', f).groups()
    try:
        j = json.load(open(f))
    except Exception as e:
        print('skip', f, e); continue
    if who == 'llama':
        pp = [x['avg_ts'] for x in j if x['n_prompt'] > 0][0]
        tg = [x['avg_ts'] for x in j if x['n_gen'] > 0][0]
        frac = None
    else:
        pp, tg = j['prefill_tok_s'], j['decode_tok_s']
        frac = j['decode_fraction_of_memory_bandwidth']
    rows.setdefault(T, {}).setdefault(who, []).append((int(r), pp, tg, frac))
for T in rows:
    print('##', T)
    lt = None
    if 'llama' in rows[T]:
        lt = st.median(x[2] for x in rows[T]['llama'])
    for who in sorted(rows[T]):
        v = sorted(rows[T][who])
        cells = ' | '.join('r%d %.1f/%.2f%s' % (r, pp, tg, '' if fr is None else ' (%.0f%%)' % (100 * fr)) for r, pp, tg, fr in v)
        med = 'median pp %.1f tg %.2f' % (st.median(x[1] for x in v), st.median(x[2] for x in v))
        if v[0][3] is not None:
            med += ' roofline %.0f%%' % (100 * st.median(x[3] for x in v))
            if lt:
                med += ' tg/llama %.2f' % (st.median(x[2] for x in v) / lt)
        print('%-6s %s\n       %s' % (who, cells, med))

# Paired: for each two binaries run in the same round, the median over rounds of the ratio of
# their decode (and prefill) tok/s, with how many rounds the first won.
for T in rows:
    names = sorted(w for w in rows[T])
    byr = {w: {r: (pp, tg) for r, pp, tg, _ in rows[T][w]} for w in names}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            common = sorted(set(byr[a]) & set(byr[b]))
            if not common:
                continue
            tg = [byr[b][r][1] / byr[a][r][1] for r in common]
            pp = [byr[b][r][0] / byr[a][r][0] for r in common]
            print('%s %s/%s: decode x%.3f (%s better in %d of %d rounds), prefill x%.3f' % (
                T, b, a, st.median(tg), b, sum(x > 1 for x in tg), len(tg), st.median(pp)))
