# Medians of run-merged.sh's samples (m-{head,merged}-T-N.json, log-merged.txt).
import json, glob, re, os, statistics as st
R = os.path.dirname(os.path.abspath(__file__))
loads = {}
for line in open(R + "/log-merged.txt"):
    m = re.match(r"== (\w+) (\S+) round (\d+) (\S+) load (\S+)", line)
    if m:
        loads[(m.group(1), m.group(2), int(m.group(3)))] = float(m.group(5))
for t in ["Q4_0", "Q8_0", "Q4_K"]:
    for b in ["head", "merged"]:
        ds, ls = [], []
        for f in sorted(glob.glob(f"{R}/m-{b}-{t}-*.json")):
            r = int(re.search(r"-(\d+)\.json$", f).group(1))
            try:
                ds.append(json.load(open(f)))
                ls.append(loads.get((b, t, r), -1))
            except Exception:
                pass
        if not ds:
            continue
        pp = [s for d in ds for s in d["prefill_tok_s_samples"]]
        tg = [s for d in ds for s in d["decode_tok_s_samples"]]
        fr = [d["decode_fraction_of_memory_bandwidth"] for d in ds]
        print(f"{t} {b}: runs {len(ds)} loads {ls}  pp med {st.median(pp):.1f}  tg med {st.median(tg):.1f}  frac med {st.median(fr):.2f}  ppcpu {st.median([d['prefill_cpu_ms_per_tok'] for d in ds]):.1f}  tgcpu {st.median([d['decode_cpu_ms_per_tok'] for d in ds]):.1f}")
