# Medians of run-grain.sh's / run-grain2.sh's samples
# (PREFIX-VARIANT-T-N.json, log-PREFIX.txt).
# Usage: python3 summary.py MAXLOAD PREFIX VARIANT...  (runs whose start
# load exceeds MAXLOAD are left out), e.g. summary.py 2.5 grain fbase g32 g64
import json, glob, re, os, sys, statistics as st
R = os.path.dirname(os.path.abspath(__file__))
maxload = float(sys.argv[1])
prefix, variants = sys.argv[2], sys.argv[3:]
loads = {}
for line in open(f"{R}/log-{prefix}.txt"):
    m = re.match(r"== (\w+) (\S+) round (\d+) (\S+) load (\S+)", line)
    if m:
        loads[(m.group(1), m.group(2), int(m.group(3)))] = float(m.group(5))
for t in ["Q4_0", "Q4_K", "Q8_0"]:
    for b in variants:
        ds, ls = [], []
        for f in sorted(glob.glob(f"{R}/{prefix}-{b}-{t}-*.json")):
            r = int(re.search(r"-(\d+)\.json$", f).group(1))
            l = loads.get((b, t, r), -1)
            if l > maxload:
                continue
            try:
                ds.append(json.load(open(f)))
                ls.append(l)
            except Exception:
                pass
        if not ds:
            continue
        pp = [s for d in ds for s in d["prefill_tok_s_samples"]]
        tg = [s for d in ds for s in d["decode_tok_s_samples"]]
        fr = [d["decode_fraction_of_memory_bandwidth"] for d in ds]
        print(f"{t} {b}: runs {len(ds)} loads {ls}  pp med {st.median(pp):.1f}  tg med {st.median(tg):.1f}  frac med {st.median(fr):.2f}  tgcpu {st.median([d['decode_cpu_ms_per_tok'] for d in ds]):.1f}")
