package quant

import (
	"encoding/binary"

	"github.com/minfer/minfer/gguf"
)

// Group tables: per-block facts about four activation rows that a
// four-token kernel would otherwise work out again for every weight row.
// For Q4_0 weights (Q8_0 activations) a block's entry is 32 bytes: the four
// tokens' d_x as float32, then 8·Σq for each (int32), which turns the dot
// of unsigned nibbles into the dot of nibble−8 exactly.

const group4Q8_0 = 32 // bytes per block of a Q8_0 group table

// Group4TableBytes is the size of the table PrepareGroup4 fills, 0 when
// this kernel takes none (then Dot4T is Dot4).
func (k *Kernel) Group4TableBytes() int {
	if k.fourT == nil {
		return 0
	}
	return k.n / qk * group4Q8_0
}

// PrepareGroup4 fills tab (Group4TableBytes long) for the four activation
// rows in x (ActRowBytes apart).
func (k *Kernel) PrepareGroup4(x, tab []byte) {
	if k.fourT == nil {
		return
	}
	nb := k.n / qk
	tab = tab[:nb*group4Q8_0]
	for b := 0; b < nb; b++ {
		e := tab[b*group4Q8_0 : (b+1)*group4Q8_0]
		for t := 0; t < 4; t++ {
			d, s8 := q8_0Facts(x[t*k.xrb+b*bytesQ80 : t*k.xrb+(b+1)*bytesQ80])
			putF32(e[4*t:], d)
			binary.LittleEndian.PutUint32(e[16+4*t:], s8)
		}
	}
}

// q8_0Facts is one Q8_0 block's table entry: its d_x as float32 and
// 8·Σq as the bits of an int32. Σq is taken eight quants a word (SWAR):
// the unsigned bytes summed in 16-bit lanes, less 256 for each negative
// quant; exact, the same as q8_0SumGeneric. A decode step's tables
// (PrepareToken1) run on the calling thread alone, before each one-token
// mat-mul: for a 5632-column row the byte loop took 2.66 µs, this 1.30
// (2048 columns: 0.97, 0.48; BenchmarkZPrepToken1 in
// bench/results/2026-12-06-s18-cpu).
func q8_0Facts(xb []byte) (d float32, s8 uint32) {
	xb = xb[:bytesQ80:bytesQ80]
	le := binary.LittleEndian
	const lanes16 = 0x00FF00FF00FF00FF
	const ones8 = 0x0101010101010101
	v0, v1, v2, v3 := le.Uint64(xb[2:]), le.Uint64(xb[10:]), le.Uint64(xb[18:]), le.Uint64(xb[26:])
	u := v0&lanes16 + (v0>>8)&lanes16 + v1&lanes16 + (v1>>8)&lanes16 +
		v2&lanes16 + (v2>>8)&lanes16 + v3&lanes16 + (v3>>8)&lanes16 // four lanes ≤ 2040
	neg := (v0>>7)&ones8 + (v1>>7)&ones8 + (v2>>7)&ones8 + (v3>>7)&ones8 // eight bytes ≤ 4
	s := int32(u*0x0001000100010001>>48) - 256*int32(neg*ones8>>56)
	return f16le(xb), uint32(8 * s)
}

// q8_0SumGeneric is Σq of one Q8_0 block, quant by quant (q8_0Facts's
// twin).
func q8_0SumGeneric(xb []byte) int32 {
	var s int32
	for _, q := range xb[2:bytesQ80] {
		s += int32(int8(q))
	}
	return s
}

// Dot4T is Dot4 with the group's table from PrepareGroup4: the same bits.
func (k *Kernel) Dot4T(w, x, tab []byte, out *[4]float32) {
	if k.fourT == nil {
		k.Dot4(w, x, out)
		return
	}
	nb := k.n / qk
	k.fourT(w[:k.wrb:k.wrb], x[:4*k.xrb:4*k.xrb], k.xrb, tab[:nb*group4Q8_0], out)
}

// fourTFor is the level's table-taking four-token kernel for t, if any.
func (ks *kernelSet) fourTFor(t gguf.GGMLType) func(w, x []byte, stride int, tab []byte, out *[4]float32) {
	if t == gguf.TypeQ4_0 {
		return ks.dot4TQ4_0Q8_0
	}
	return nil
}

// Token tables: the same facts for one activation row, for the four-row
// kernel: per block 8 bytes, d_x as float32 then 8·Σq (int32).
const token1Q8_0 = 8

// Token1TableBytes is the size of the table PrepareToken1 fills, 0 when
// this kernel takes none (then Dot4RowsT is Dot4Rows): Q4_0's four- and
// eight-row kernels take it, and the Q8_0 x8 kernels (rows8i.go).
func (k *Kernel) Token1TableBytes() int {
	if k.rows4T == nil && k.rows8X8 == nil {
		return 0
	}
	return k.n / qk * token1Q8_0
}

// PrepareToken1 fills tab (Token1TableBytes long) for the activation row x.
// It runs on the calling thread before each one-token mat-mul of Q4_0 or
// Q8_0 weights (four per block of a decode step), SIMD where the level has
// it: at 2048 columns the word-wise loop took 0.52 µs (AVX2: 0.11) and
// the tables 0.08–0.17 ms of a 1B Q4_0 decode step on the calling thread
// (AVX2: 0.02–0.04; bench/results/2026-12-07-s22-cpu).
func (k *Kernel) PrepareToken1(x, tab []byte) {
	if k.rows4T == nil && k.rows8X8 == nil {
		return
	}
	nb := k.n / qk
	cur.token1Q8_0(x[:nb*bytesQ80], tab[:nb*token1Q8_0])
}

// token1Q8_0Generic is the token table block by block (q8_0Facts).
func token1Q8_0Generic(x, tab []byte) {
	for b := 0; b < len(tab)/token1Q8_0; b++ {
		d, s8 := q8_0Facts(x[b*bytesQ80 : (b+1)*bytesQ80])
		putF32(tab[b*token1Q8_0:], d)
		binary.LittleEndian.PutUint32(tab[b*token1Q8_0+4:], s8)
	}
}

// Dot4RowsT is Dot4Rows with the row's table from PrepareToken1: the same
// bits.
func (k *Kernel) Dot4RowsT(w, x, tab []byte, out *[4]float32) {
	if k.rows4T == nil {
		k.Dot4Rows(w, x, out)
		return
	}
	nb := k.n / qk
	k.rows4T(w[:4*k.wrb:4*k.wrb], k.wrb, x[:k.xrb:k.xrb], tab[:nb*token1Q8_0], out)
}
