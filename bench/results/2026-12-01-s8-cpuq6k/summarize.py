#!/usr/bin/env python3
"""Table of raw/ (run.sh's output): per type and round, minfer before
(main), after (br) and llama-bench pp128 / tg64 tok/s, minfer's roofline
fraction (decode weight GB/s over its meter: main's the best reading after
the run, br's the mean of the readings around the decode run), and
llama.cpp's decode against the br run's meter of the same round (weight
bytes per token from minfer's report of the same file)."""
import json, os, statistics, sys

d = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'raw')
types = ['Q4_K_M', 'Q4_0', 'Q8_0']
rows = []
med = {}
for t in types:
    for r in (1, 2, 3):
        def load(who):
            p = os.path.join(d, f'{t}-r{r}-{who}.json')
            if not os.path.exists(p) or os.path.getsize(p) == 0:
                return None
            return json.load(open(p))
        m, b, l = load('main'), load('br'), load('llama')
        if not (m and b and l):
            continue
        lpp = next(x['avg_ts'] for x in l if x['n_prompt'] > 0)
        ltg = next(x['avg_ts'] for x in l if x['n_gen'] > 0)
        lfrac = b['weight_bytes_per_decode_token'] * ltg / 1e9 / b['measured_memory_gb_s']
        row = dict(t=t, r=r, mpp=m['prefill_tok_s'], mtg=m['decode_tok_s'], mfrac=m['decode_fraction_of_memory_bandwidth'],
                   mmem=m['measured_memory_gb_s'], bpp=b['prefill_tok_s'], btg=b['decode_tok_s'],
                   bfrac=b['decode_fraction_of_memory_bandwidth'], bmem=b['measured_memory_gb_s'], bmax=b['measured_memory_gb_s_max'],
                   lpp=lpp, ltg=ltg, lfrac=lfrac)
        rows.append(row)
        for k, v in row.items():
            if k not in ('t', 'r'):
                med.setdefault((t, k), []).append(v)

hdr = ('| type | round | pp128 main | pp128 cpuq6k | pp128 llama | tg64 main | tg64 cpuq6k | tg64 llama | '
       'roofline main (best) | roofline cpuq6k (mean) | llama vs mean | meter main best | meter cpuq6k mean / max |')
print(hdr)
print('|' + '---|' * 13)
for x in rows:
    print(f"| {x['t']} | {x['r']} | {x['mpp']:.1f} | {x['bpp']:.1f} | {x['lpp']:.1f} | {x['mtg']:.2f} | {x['btg']:.2f} | {x['ltg']:.2f} | "
          f"{100*x['mfrac']:.0f}% | {100*x['bfrac']:.0f}% | {100*x['lfrac']:.0f}% | {x['mmem']:.1f} | {x['bmem']:.1f} / {x['bmax']:.1f} |")
print()
print('Medians of the three rounds:')
print()
print('| type | pp128 main | pp128 cpuq6k | pp128 llama | cpuq6k/llama pp | tg64 main | tg64 cpuq6k | tg64 llama | cpuq6k/llama tg | roofline main | roofline cpuq6k | llama roofline |')
print('|' + '---|' * 12)
for t in types:
    g = lambda k: statistics.median(med[(t, k)]) if (t, k) in med else float('nan')
    if (t, 'btg') not in med:
        continue
    print(f"| {t} | {g('mpp'):.1f} | {g('bpp'):.1f} | {g('lpp'):.1f} | {g('bpp')/g('lpp'):.2f}× | {g('mtg'):.2f} | {g('btg'):.2f} | {g('ltg'):.2f} | "
          f"{g('btg')/g('ltg'):.2f}× | {100*g('mfrac'):.0f}% | {100*g('bfrac'):.0f}% | {100*g('lfrac'):.0f}% |")

# ab.sh: minfer before/after, -r 3 each, five alternating rounds.
da = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'raw-ab')
for t in ['Q4_K_M', 'Q6_K']:
    if not os.path.exists(os.path.join(da, f'{t}-r1-main.json')):
        continue
    print()
    print(f'ab.sh, {t} (-r 3 per run; order main,br in odd rounds, br,main in even):')
    print()
    print('| round | pp128 main | pp128 cpuq6k | tg64 main | tg64 cpuq6k | cpuq6k/main tg | roofline main (best) | roofline cpuq6k (mean) |')
    print('|' + '---|' * 8)
    for r in range(1, 6):
        m = json.load(open(os.path.join(da, f'{t}-r{r}-main.json')))
        b = json.load(open(os.path.join(da, f'{t}-r{r}-br.json')))
        print(f"| {r} | {m['prefill_tok_s']:.1f} | {b['prefill_tok_s']:.1f} | {m['decode_tok_s']:.2f} ± {m['decode_tok_s_stddev']:.2f} | "
              f"{b['decode_tok_s']:.2f} ± {b['decode_tok_s_stddev']:.2f} | {b['decode_tok_s']/m['decode_tok_s']:.2f} | "
              f"{100*m['decode_fraction_of_memory_bandwidth']:.0f}% | {100*b['decode_fraction_of_memory_bandwidth']:.0f}% |")
