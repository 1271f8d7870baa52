import struct
def data(name, bs, comment=None):
    out=[]
    assert len(bs)%8==0
    for i in range(0,len(bs),8):
        v=struct.unpack('<Q',bytes(bs[i:i+8]))[0]
        out.append("DATA %s<>+%d(SB)/8, $0x%016x" % (name,i,v))
    out.append("GLOBL %s<>(SB), RODATA|NOPTR, $%d" % (name,len(bs)))
    return "\n".join(out)
def words(ws): return b''.join(struct.pack('<H',w&0xffff) for w in ws)
def dwords(ds): return b''.join(struct.pack('<I',d) for d in ds)
# header lane: 0-1 d, 2-3 dmin, 4..15 s0..s11
shufL = [4,5,6,7, 12,13,14,15, 8,9,10,11, 12,13,14,15]*4
cnt = words([0,0,0,0,0,0,4,4]*4)
shufH = [0x80]*4 + [4,5,6,7] + [0x80]*4 + [8,9,10,11]
shufH = shufH*4
maskL = ([0x3f]*4+[0x0f]*4+[0x3f]*4+[0x0f]*4)*4
c0 = [0xc0]*64
# spread indices, pair-local table: row a words 0..7, row b 8..15
I=[]
for base in [0,1,4,5]:
    ws=[]
    for L in range(4):
        sub = base + (2 if L>=2 else 0)
        for w in range(8):
            ws.append(8*(0 if w<4 else 1)+sub)
    I.append(words(ws))
# mins word layout: lane0 rows0,1 j0-3; lane1 rows0,1 j4-7; lane2 rows2,3 j0-3; lane3 rows 2,3 j4-7
mw=[]
for L in range(4):
    ra, rb = (0,1) if L<2 else (2,3)
    j0 = 0 if L%2==0 else 4
    mw += [8*ra+j0+i for i in range(4)] + [8*rb+j0+i for i in range(4)]
bsp=[]
for L in range(4):
    j0 = 0 if L%2==0 else 4
    bsp += [2*(j0+i) for i in range(4)]*2
red = dwords([0,2,4,6,8,10,12,14]+[0]*8)
f16 = words([0,8,16,24,1,9,17,25]+[0]*24)
ones = words([1]*16)
print(data("q4kShufL", shufL))
print(data("q4kShufH", shufH))
print(data("q4kShiftM", cnt))
print(data("q4kMaskL", maskL))
print(data("q4kHiMask", c0))
print(data("q4kSpread", b''.join(I)))
print(data("q4kMinIdx", words(mw)))
print(data("q4kBsumIdx", words(bsp)))
print(data("q4kRedIdx", red))
print(data("q4kDIdx", f16))
print(data("q4kOnes", ones))
