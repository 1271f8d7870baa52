#!/usr/bin/env python3
"""Summarises an `ncu --csv --metrics gpu__time_duration.sum[,dram__bytes_read.sum]` kernel list:
per kernel name (with its grid), launches, mean µs, total ms, share, and the DRAM read rate (GB/s) where the
bytes were measured. Usage: ncu_sum.py FILE.csv [steps] (steps: divide the totals by it, e.g. decode steps).
(ncu's own --print-summary per-kernel groups by name only: one mat-vec kernel serving q/k/v, out and down is one
line there; here each grid is its own line, with its read rate.)"""
import csv, sys, collections
rows = collections.OrderedDict()
f = open(sys.argv[1], errors="replace")
lines = [l for l in f if l.startswith('"')]
k = {}
for r in csv.DictReader(lines):
    key = r["ID"]
    d = k.setdefault(key, {"name": r["Kernel Name"].split("(")[0], "grid": r["Grid Size"], "block": r["Block Size"]})
    v = float(r["Metric Value"].replace(",", ""))
    unit = r["Metric Unit"]
    if r["Metric Name"].startswith("gpu__time_duration"):
        d["us"] = v * {"ns": 1e-3, "nsecond": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3}[unit]
    elif r["Metric Name"].startswith("dram__bytes_read"):
        mult = {"byte": 1, "B": 1, "Kbyte": 1e3, "KB": 1e3, "Mbyte": 1e6, "MB": 1e6, "Gbyte": 1e9, "GB": 1e9}[unit]
        d["bytes"] = v * mult
agg = collections.OrderedDict()
for d in k.values():
    a = agg.setdefault((d["name"], d["grid"], d["block"]), {"n": 0, "us": 0.0, "bytes": 0.0})
    a["n"] += 1; a["us"] += d.get("us", 0); a["bytes"] += d.get("bytes", 0)
tot = sum(a["us"] for a in agg.values())
steps = float(sys.argv[2]) if len(sys.argv) > 2 else 1
print(f"{len(k)} launches, {tot/1000:.3f} ms in all ({tot/steps:.1f} µs a step over {steps:g} steps)")
print(f"{'kernel':34} {'grid':>14} {'block':>12} {'n':>5} {'µs each':>8} {'µs/step':>8} {'share':>6} {'GB/s':>7}")
for (name, grid, block), a in sorted(agg.items(), key=lambda x: -x[1]["us"]):
    gbs = a["bytes"] / (a["us"] * 1e-6) / 1e9 if a["us"] and a["bytes"] else 0
    print(f"{name[:34]:34} {grid:>14} {block:>12} {a['n']:5d} {a['us']/a['n']:8.2f} {a['us']/steps:8.1f} {100*a['us']/tot:5.1f}% {gbs:7.0f}")
