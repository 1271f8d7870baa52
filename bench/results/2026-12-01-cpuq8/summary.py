# Medians of run.sh's samples (PREFIX-VARIANT-T-N.json, log-PREFIX.txt).
# Usage: python3 summary.py PREFIX VARIANT...
# Only clean runs count: other engineers' jobs share the 2 cores, and a run
# that got them only part of the time used fewer than 2 cores; a run is
# clean when its prefill and its decode each kept >= 1.9 cores busy
# (CPU ms per token x tok/s / 1000, the bench's own figures).
# Per cell: the median of all prefill / decode samples, the median roofline
# fraction (decode weight GB/s over the same run's measured read GB/s),
# the median of decode weight GB/s / the median measured GB/s of all runs
# of the set, CPU ms per token; then each round's medians side by side.
import json, glob, re, os, sys, statistics as st
R = os.path.dirname(os.path.abspath(__file__))
prefix, variants = sys.argv[1], sys.argv[2:]
loads = {}
for line in open(f"{R}/log-{prefix}.txt"):
    m = re.match(r"\S+ round (\d+) (\S+) (\S+) load (\S+)", line)
    if m:
        loads[(m.group(3), m.group(2), int(m.group(1)))] = float(m.group(4))
allruns = {}
for f in glob.glob(f"{R}/{prefix}-*.json"):
    m = re.search(rf"{prefix}-(\w+)-(Q\w+?)-(\d+)\.json$", f)
    try:
        d = json.load(open(f))
    except Exception:
        continue
    cores = lambda k: d[k + "_cpu_ms_per_tok"] * d[k + "_tok_s"] / 1000
    d["clean"] = cores("prefill") >= 1.9 and cores("decode") >= 1.9
    allruns[(m.group(1), m.group(2), int(m.group(3)))] = d
runs = {k: d for k, d in allruns.items() if d["clean"]}
mem = st.median([d["measured_memory_gb_s"] for d in runs.values()])
print(f"clean runs {len(runs)} of {len(allruns)}; median measured read bandwidth of the clean runs: {mem:.1f} GB/s")
print("type variant runs | pp tok/s | tg tok/s | tg/roofline (own run) | tg GB/s / set median | pp cpu ms/tok | tg cpu ms/tok")
for t in ["Q4_0", "Q4_K", "Q8_0"]:
    for v in variants:
        ds = [d for (vv, tt, r), d in sorted(runs.items()) if vv == v and tt == t]
        if not ds:
            continue
        pp = [s for d in ds for s in d["prefill_tok_s_samples"]]
        tg = [s for d in ds for s in d["decode_tok_s_samples"]]
        fr = [d["decode_fraction_of_memory_bandwidth"] for d in ds]
        w = ds[0]["weight_bytes_per_decode_token"]
        print(f"{t} {v} {len(ds)} | {st.median(pp):.1f} | {st.median(tg):.1f} | {st.median(fr):.2f} | "
              f"{w * st.median(tg) / 1e9 / mem:.2f} | {st.median([d['prefill_cpu_ms_per_tok'] for d in ds]):.1f} | "
              f"{st.median([d['decode_cpu_ms_per_tok'] for d in ds]):.1f}")
print("\nper round, clean runs only (median of the run's samples): pp, tg; load at start")
rounds = sorted({r for (_, _, r) in runs})
for t in ["Q4_0", "Q4_K", "Q8_0"]:
    for r in rounds:
        cells = []
        for v in variants:
            d = runs.get((v, t, r))
            if d:
                cells.append(f"{v} {st.median(d['prefill_tok_s_samples']):.1f} {st.median(d['decode_tok_s_samples']):.1f} (load {loads.get((v, t, r), -1)})")
        print(f"{t} round {r}: " + "; ".join(cells))
