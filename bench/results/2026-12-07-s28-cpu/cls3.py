import re,sys,statistics as st
cur=None; data={}; blk=[]
for l in open(sys.argv[1]):
    if l.startswith('# pf='):
        cur=int(l.split('=')[1].split()[0]); blk=[]
    elif l.startswith('pfstat'):
        blk.append(float(l.split('on/off')[1].split()[0]))
    elif 'decode' in l:
        frac=int(re.search(r'(\d+)%',l).group(1)); meter=float(re.search(r'memory reads ([\d.]+)',l).group(1))
        data.setdefault((cur,'fast' if meter>=48 else 'slow'),[]).extend(blk)
        print(cur, meter, frac, ' '.join(f'{x:.4f}' for x in blk))
for k in sorted(data):
    v=data[k]; print(k, len(v), 'median on/off', round(st.median(v),4), 'mean', round(st.mean(v),4))
