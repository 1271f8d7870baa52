import sys,statistics as st
rows=[]
for f in sys.argv[1:]:
    for l in open(f):
        if l.startswith('round'):
            p=l.split(); rows.append((float(p[3]),float(p[5]),float(p[7])))
for name,lo,hi in [('slow (meter<40)',0,40),('mid 40-48',40,48),('fast (meter>=48)',48,999)]:
    sel=[r for r in rows if lo<=r[0]<hi]
    if not sel: print(name,'none'); continue
    rat=[r[2]/r[1] for r in sel]
    print(f"{name}: {len(sel)} rounds; meter med {st.median([r[0] for r in sel]):.1f}; old med {st.median([r[1] for r in sel]):.2f}; new med {st.median([r[2] for r in sel]):.2f}; new/old median {st.median(rat):.4f}")
