import sys,statistics as st
rows=[]
for l in open(sys.argv[1]):
    if l.startswith('round'):
        p=l.split(); rows.append((float(p[3]),float(p[5]),float(p[7])))
print(len(rows),"rounds")
for name,lo,hi in [('memory slow (meter<40)',0,40),('memory mid 40-48',40,48),('memory fast (meter>=48)',48,999)]:
    sel=[r for r in rows if lo<=r[0]<hi]
    if not sel: print(name,'none'); continue
    sc=[r[2]/r[1] for r in sel]
    one=sum(1 for s in sc if s<1.3)
    print(f"{name}: {len(sel)} rounds; meter med {st.median([r[0] for r in sel]):.1f}; cache1 med {st.median([r[1] for r in sel]):.1f}; cache2 med {st.median([r[2] for r in sel]):.1f}; cache2/cache1 med {st.median(sc):.2f}; rounds with 2 threads < 1.3x one: {one} ({100*one/len(sel):.0f}%)")
