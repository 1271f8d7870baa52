#!/usr/bin/env python3
# Summarize sbs.sh's raw output: per type and round, minfer's pp128 / tg64 tok/s and its decode roofline fraction
# (decode weight GB/s over the memory meter's mean), llama-bench's pp128 / tg64, and the ratios; medians at the end.
import json, glob, os, statistics as st, sys
d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'sbs')
def llama(f):
    pp = tg = None
    for r in json.load(open(f)):
        if r.get('n_prompt') == 128 and r.get('n_gen') == 0: pp = r['avg_ts']
        if r.get('n_gen') == 64 and r.get('n_prompt') == 0: tg = r['avg_ts']
    return pp, tg
for T in ['Q4_0', 'Q8_0', 'Q4_K_M']:
    rows = []
    for r in range(1, 20):
        fm, fl = f'{d}/{T}-r{r}-main.json', f'{d}/{T}-r{r}-llama.json'
        if not os.path.exists(fm): continue
        m = json.load(open(fm))
        try:
            pp, tg = llama(fl)
        except Exception:  # llama-bench died (its .err and .time say how)
            print(f"{T} r{r}: minfer pp {m['prefill_tok_s']:.1f} tg {m['decode_tok_s']:.2f} (roofline {m['decode_fraction_of_memory_bandwidth']:.3f}, meter {m['measured_memory_gb_s']:.1f} GB/s) | llama-bench: no result ({open(fl[:-5] + '.time').read().split()[1]})")
            continue
        rows.append((m['prefill_tok_s'], m['decode_tok_s'], m['decode_fraction_of_memory_bandwidth'], m['measured_memory_gb_s'], pp, tg))
        print(f"{T} r{r}: minfer pp {m['prefill_tok_s']:.1f} tg {m['decode_tok_s']:.2f} (roofline {m['decode_fraction_of_memory_bandwidth']:.3f}, meter {m['measured_memory_gb_s']:.1f} GB/s) | llama.cpp pp {pp:.1f} tg {tg:.2f} | ratio pp {m['prefill_tok_s']/pp:.2f} tg {m['decode_tok_s']/tg:.2f}")
    if rows:
        med = lambda i: st.median(x[i] for x in rows)
        print(f"{T} median of {len(rows)}: minfer pp {med(0):.1f} tg {med(1):.2f} roofline {med(2):.3f} meter {med(3):.1f} | llama.cpp pp {med(4):.1f} tg {med(5):.2f} | ratio pp {st.median(x[0]/x[4] for x in rows):.2f} tg {st.median(x[1]/x[5] for x in rows):.2f}")
