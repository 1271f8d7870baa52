# Medians of run.sh's / run2.sh's samples ({q6base,q6head}-T-N.json,
# log.txt, log2.txt).
# Usage: python3 summary.py MAXLOAD [MINROUND]
#   runs whose start load exceeds MAXLOAD are left out, and run2.sh's
#   runs during which another process was running in more than 10 % of
#   the one-second snapshots; MINROUND (default 1) leaves out earlier
#   rounds (5: only run2.sh's, whose contention is recorded).
# Prints per type and binary: runs, median prefill and decode tok/s over
# all samples, median roofline fraction, bandwidth and CPU ms per token,
# then each round with both binaries kept (paired).
import json, glob, re, os, sys, statistics as st
R = os.path.dirname(os.path.abspath(__file__))
maxload = float(sys.argv[1]) if len(sys.argv) > 1 else 99
minround = int(sys.argv[2]) if len(sys.argv) > 2 else 1
bad = set()
for log in ["log.txt", "log2.txt"]:
    if not os.path.exists(f"{R}/{log}"):
        continue
    for line in open(f"{R}/{log}"):
        m = re.match(r"== (\w+) (\S+) round (\d+) (\S+) load (\S+)(?: \S+ \S+ busy (\d+)/(\d+))?", line)
        if not m:
            continue
        key = (m.group(1), m.group(2), int(m.group(3)))
        if float(m.group(5)) > maxload:
            bad.add(key)
        if m.group(6) is not None and int(m.group(6)) > 0.1 * max(1, int(m.group(7))):
            bad.add(key)
def load(b, t):
    out = {}
    for f in sorted(glob.glob(f"{R}/{b}-{t}-*.json")):
        r = int(re.search(r"-(\d+)\.json$", f).group(1))
        if r < minround or (b, t, r) in bad:
            continue
        try:
            out[r] = json.load(open(f))
        except Exception:
            pass
    return out
for t in ["Q4_K_M", "Q4_K", "Q4_0"]:
    runs = {b: load(b, t) for b in ["q6base", "q6head"]}
    for b, ds in runs.items():
        if not ds:
            continue
        d = list(ds.values())
        pp = [s for x in d for s in x["prefill_tok_s_samples"]]
        tg = [s for x in d for s in x["decode_tok_s_samples"]]
        print(f"{t:7s} {b}: runs {len(d)}  pp {st.median(pp):6.1f}  tg {st.median(tg):5.1f}  "
              f"roofline frac {st.median([x['decode_fraction_of_memory_bandwidth'] for x in d]):.2f}  "
              f"bw {st.median([x['measured_memory_gb_s'] for x in d]):.1f} GB/s  "
              f"pp cpu ms/tok {st.median([x['prefill_cpu_ms_per_tok'] for x in d]):.1f}  "
              f"tg cpu ms/tok {st.median([x['decode_cpu_ms_per_tok'] for x in d]):.1f}")
    both = sorted(set(runs["q6base"]) & set(runs["q6head"]))
    for r in both:
        b, h = runs["q6base"][r], runs["q6head"][r]
        print(f"  round {r}: pp {b['prefill_tok_s']:.1f} -> {h['prefill_tok_s']:.1f}  "
              f"tg {b['decode_tok_s']:.1f} -> {h['decode_tok_s']:.1f}  "
              f"tg cpu ms {b['decode_cpu_ms_per_tok']:.1f} -> {h['decode_cpu_ms_per_tok']:.1f}")
