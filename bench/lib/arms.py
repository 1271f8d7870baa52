#!/usr/bin/env python3
"""arms.py SUMMARY: the bench runs of a device call's summary.txt (bench/lib/device.sh's bn lines) grouped by
command (the '## ...' line with the carry's path cut), each arm's prefill and decode tok/s in run order and their
median: one line an arm, for a README."""
import re, statistics, sys
from collections import OrderedDict

arms = OrderedDict()
cur = None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("## "):
        cur = re.sub(r"/\S*/(minfer[-\w]*)", r"\1", line[3:])
        arms.setdefault(cur, {"prefill": [], "decode": []})
        continue
    m = re.match(r"^(prefill|decode)\s+\d+ tokens: ([\d.]+)", line)
    if m and cur is not None:
        arms[cur][m.group(1)].append(float(m.group(2)))
for cmd, v in arms.items():
    parts = []
    for k in ("prefill", "decode"):
        if v[k]:
            parts.append("%s %s (median %.1f)" % (k, " / ".join("%.1f" % x for x in v[k]), statistics.median(v[k])))
    if parts:
        print("%s: %s" % (cmd, "; ".join(parts)))
