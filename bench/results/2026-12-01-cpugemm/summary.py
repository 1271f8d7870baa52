import json, glob, re, statistics as st, sys
import os
R = os.path.dirname(os.path.abspath(__file__))
loads = {}
for line in open(R + "/log.txt"):
    m = re.match(r"== (\w+) (\S+) round (\d+) (\S+) load (\S+)", line)
    if m:
        loads[(m.group(1), m.group(2), int(m.group(3)))] = float(m.group(5))
maxload = float(sys.argv[1]) if len(sys.argv) > 1 else 1e9
rows = []
for f in sorted(glob.glob(R + "/*-*-*.json")):
    b, t, r = re.match(r".*/(base|head)-(\w+?)-(\d+)\.json", f).groups()
    try:
        d = json.load(open(f))
    except Exception:
        continue
    rows.append((t, b, int(r), loads.get((b, t, int(r)), -1), d))
for t in ["Q4_0", "Q8_0", "Q4_K"]:
    for b in ["base", "head"]:
        sel = [x for x in rows if x[0] == t and x[1] == b and x[3] <= maxload]
        if not sel:
            continue
        pp = [s for x in sel for s in x[4]["prefill_tok_s_samples"]]
        tg = [s for x in sel for s in x[4]["decode_tok_s_samples"]]
        fr = [x[4]["decode_fraction_of_memory_bandwidth"] for x in sel]
        bw = [x[4]["measured_memory_gb_s"] for x in sel]
        ppc = [x[4]["prefill_cpu_ms_per_tok"] for x in sel]
        tgc = [x[4]["decode_cpu_ms_per_tok"] for x in sel]
        print(f"{t} {b}: runs {len(sel)} loads {[x[3] for x in sel]}  pp med {st.median(pp):.1f} (max {max(pp):.1f})  tg med {st.median(tg):.1f} (max {max(tg):.1f})  frac med {st.median(fr):.2f}  bw med {st.median(bw):.1f}  ppcpu {st.median(ppc):.1f} tgcpu {st.median(tgc):.1f}")
