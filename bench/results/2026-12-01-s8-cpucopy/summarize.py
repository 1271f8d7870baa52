#!/usr/bin/env python3
# Table of raw*/ runs: prefill / decode tok/s per round, minfer's weight GB/s and roofline fraction
# (against the mean of the meter's readings), llama-bench's avg_ts.
import json, glob, re, sys, statistics as st
d = sys.argv[1] if len(sys.argv) > 1 else 'raw'
rows = {}
for f in sorted(glob.glob(d + '/*.json')):
    T, r, who = re.match(r'.*/(.+)-r(\d)-(\w+)\.json', f).groups()
    j = json.load(open(f))
    if who == 'llama':
        pp = [x['avg_ts'] for x in j if x['n_prompt'] > 0][0]
        tg = [x['avg_ts'] for x in j if x['n_gen'] > 0][0]
        extra = ''
    else:
        pp, tg = j['prefill_tok_s'], j['decode_tok_s']
        extra = ' (%.1f GB/s, %.0f%%; %s)' % (j['decode_weight_gb_s'], 100 * j['decode_fraction_of_memory_bandwidth'], j.get('cpu_weights', '')[:6])
    rows.setdefault(T, {}).setdefault(who, []).append((int(r), pp, tg, extra))
for T in rows:
    print('##', T)
    for who in ('map', 'copy', 'llama'):
        v = sorted(rows[T].get(who, []))
        print('%-6s' % who, ' | '.join('r%d %.1f / %.2f%s' % x for x in v), '| median pp %.1f tg %.2f' % (st.median(x[1] for x in v), st.median(x[2] for x in v)))
