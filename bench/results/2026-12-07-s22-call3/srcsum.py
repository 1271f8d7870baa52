#!/usr/bin/env python3
# Summarizes an `ncu --page source --print-source sass --csv` dump (run.sh's src-*.csv): instructions executed by
# opcode, warp stall samples by reason, and the hottest instructions by samples. Usage: srcsum.py FILE [top]
import csv, sys, collections
rows = []
with open(sys.argv[1]) as f:
    lines = f.readlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"Address"'))
for r in csv.DictReader(lines[start:]):
    if not r.get("Source"):
        continue
    rows.append(r)
num = lambda s: float(s.replace(",", "")) if s not in ("", None) else 0.0
tot = sum(num(r["Instructions Executed"]) for r in rows)
samples = sum(num(r["Warp Stall Sampling (All Samples)"]) for r in rows)
print(f"{len(rows)} SASS instructions, {tot:,.0f} warp instructions executed, {samples:,.0f} stall samples")
ops = collections.Counter()
for r in rows:
    op = r["Source"].split()[0]
    if op.startswith("@"):
        op = r["Source"].split()[1]
    ops[op.split(".")[0]] += num(r["Instructions Executed"])
print("executed by opcode:", ", ".join(f"{k} {100*v/tot:.1f}%" for k, v in ops.most_common(18)))
st = collections.Counter()
for r in rows:
    for k in r:
        if k.startswith("stall_") and "Not Issued" not in k:
            st[k[6:]] += num(r[k])
s = sum(st.values())
print("stall samples:", ", ".join(f"{k} {100*v/s:.1f}%" for k, v in st.most_common(10)))
top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
print(f"hottest {top} instructions (samples, executed, source):")
for r in sorted(rows, key=lambda r: -num(r["Warp Stall Sampling (All Samples)"]))[:top]:
    reasons = sorted(((num(r[k]), k[6:]) for k in r if k.startswith("stall_") and "Not Issued" not in k), reverse=True)[:2]
    print(f"  {r['Address']} {num(r['Warp Stall Sampling (All Samples)']):6.0f} {num(r['Instructions Executed']):10,.0f}  {r['Source'][:60]:60s} {reasons}")
