import sys
v=sys.argv[1]
s=open('/tmp/cpuq6-rows4q6k.s.orig').read()
old="""	PREFETCHT0 (R13)(R8*4); \\
	PREFETCHT0 64(R13)(R8*4); \\
	PREFETCHT0 128(R13)(R8*4); \\
	PREFETCHT0 192(R13)(R8*4); \\
"""
assert old in s
new={
 'next4': old,
 'inrow': """	PREFETCHT0 768(R13); \\
	PREFETCHT0 832(R13); \\
	PREFETCHT0 896(R13); \\
""",
 'next8': old.replace('R8*4','R8*8'),
 'next4x3': """	PREFETCHT0 (R13)(R8*4); \\
	PREFETCHT0 64(R13)(R8*4); \\
	PREFETCHT0 128(R13)(R8*4); \\
""",
  'linear': "",
}[v]
if v == 'linear':
    s = s.replace('''	VPINSRW $3, 208(SI)(R9*1), X8, X8
''', '''	VPINSRW $3, 208(SI)(R9*1), X8, X8
	// Prefetch the next call's four rows as one sequential stream: the
	// 840 bytes they hold per super-block of these rows' 840.
	PREFETCHT0 0(R12)
	PREFETCHT0 64(R12)
	PREFETCHT0 128(R12)
	PREFETCHT0 192(R12)
	PREFETCHT0 256(R12)
	PREFETCHT0 320(R12)
	PREFETCHT0 384(R12)
	PREFETCHT0 448(R12)
	PREFETCHT0 512(R12)
	PREFETCHT0 576(R12)
	PREFETCHT0 640(R12)
	PREFETCHT0 704(R12)
	PREFETCHT0 768(R12)
	PREFETCHT0 832(R12)
	ADDQ $840, R12
''')
    s = s.replace('''	LEAQ (R8)(R8*2), R9
''', '''	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R12
''')
s=s.replace(old,new)
open('/work/wt-cpuq6/core/quant/rows4q6k_amd64.s','w').write(s)
