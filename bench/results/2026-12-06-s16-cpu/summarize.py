# usage: python3 summarize.py pairs-X.txt ...: per type, each round's minfer
# (prefill, decode tok/s, roofline fraction, meter GB/s) and llama-bench
# (pp128, tg64) figures, the per-round ratios and the medians.
import json, re, statistics, sys
rows = {}
for fn in sys.argv[1:]:
    txt = open(fn).read()
    parts = re.split(r'^== ', txt, flags=re.M)[1:]
    for p in parts:
        head = p.split('\n', 1)[0]
        m = re.match(r'(\S+) r(\d+) (\w+)', head)
        typ, rnd, who = m.group(1), int(m.group(2)), m.group(3)
        busy = '(busy)' in head
        key = (fn, typ, rnd)
        d = rows.setdefault(key, {})
        if who == 'minfer':
            j = p[p.index('{'):p.rindex('}') + 1]
            j = json.loads(j)
            d['m'] = (j['prefill_tok_s'], j['decode_tok_s'], j['decode_fraction_of_memory_bandwidth'], j['measured_memory_gb_s'], j['decode_weight_gb_s'])
        else:
            pp = re.search(r'pp128 \|\s+([\d.]+)', p)
            tg = re.search(r'tg64 \|\s+([\d.]+)', p)
            d['l'] = (float(pp.group(1)), float(tg.group(1)))
        d['busy'] = d.get('busy', False) or busy
for typ in ['Q4_0', 'Q8_0', 'Q4_K_M']:
    ks = sorted(k for k in rows if k[1] == typ and 'm' in rows[k] and 'l' in rows[k])
    if not ks:
        continue
    print(f'## {typ}')
    print('| file | round | minfer pp | llama pp | pp ratio | minfer tg | llama tg | tg ratio | roofline | meter GB/s | decode GB/s |')
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    cols = {c: [] for c in ['mpp', 'lpp', 'rpp', 'mtg', 'ltg', 'rtg', 'fr', 'mem', 'dgb']}
    for k in ks:
        d = rows[k]; m, l = d['m'], d['l']
        v = dict(mpp=m[0], lpp=l[0], rpp=m[0] / l[0], mtg=m[1], ltg=l[1], rtg=m[1] / l[1], fr=m[2], mem=m[3], dgb=m[4])
        for c in cols: cols[c].append(v[c])
        print(f"| {k[0]} | {k[2]}{' (busy)' if d['busy'] else ''} | {v['mpp']:.1f} | {v['lpp']:.1f} | {v['rpp']:.2f} | {v['mtg']:.1f} | {v['ltg']:.1f} | {v['rtg']:.2f} | {v['fr']:.3f} | {v['mem']:.1f} | {v['dgb']:.1f} |")
    md = {c: statistics.median(x) for c, x in cols.items()}
    print(f"| **median** | {len(ks)} | {md['mpp']:.1f} | {md['lpp']:.1f} | {md['rpp']:.2f} | {md['mtg']:.1f} | {md['ltg']:.1f} | {md['rtg']:.2f} | {md['fr']:.3f} | {md['mem']:.1f} | {md['dgb']:.1f} |")
    print()
