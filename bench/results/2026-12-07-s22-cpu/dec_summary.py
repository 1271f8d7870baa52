#!/usr/bin/env python3
# Table of dec/*.json (dec.sh; another directory as the argument): one row per bench run, then the fractions
# by type and binary. python3 dec_summary.py > dec-summary.txt
import json, os, re, statistics, sys
d = os.path.join(os.path.dirname(os.path.abspath(__file__)), sys.argv[1] if len(sys.argv) > 1 else "dec")
log = {}
for line in open(os.path.join(d, "log.txt")):
    m = re.match(r"(\S+) (r\d) (\S+) (old|new) some avg10=(\S+)", line)
    if m:
        log[(m[2], m[3], m[4])] = (m[1], m[5])
rows = []
for r in ("r1", "r2", "r3"):
    for t in ("q4_0", "q8_0", "q4_k_m"):
        for b in ("old", "new"):
            j = json.load(open(os.path.join(d, f"{r}-{t}-{b}.json")))
            s = j["measured_memory_gb_s_samples"]
            rows.append((r, t, b, log[(r, t, b)][0], log[(r, t, b)][1], j["decode_tok_s"], j["decode_weight_gb_s"], s[0], s[1], j["decode_fraction_of_memory_bandwidth"]))
print("| run | type | binary | start (UTC) | cpu psi avg10 | decode tok/s | weights GB/s | meter samples | fraction of the meter |")
print("|---|---|---|---|---|---|---|---|---|")
for x in rows:
    print(f"| {x[0]} | {x[1]} | {x[2]} | {x[3]} | {x[4]} | {x[5]:.2f} | {x[6]:.1f} | {x[7]:.1f} / {x[8]:.1f} | {x[9]:.3f} |")
print()
for t in ("q4_0", "q8_0", "q4_k_m"):
    for b in ("old", "new"):
        f = [x[9] for x in rows if x[1] == t and x[2] == b]
        print(f"{t} {b}: fractions {' '.join(f'{v:.3f}' for v in f)}  median {statistics.median(f):.3f}")
