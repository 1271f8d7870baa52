package quant

import (
	"encoding/binary"

	"github.com/minfer/minfer/gguf"
)

// The col16 layout (LayoutCol16; rows16c.go has Q4_0's) of Q4_K, "c16" in
// the names here: a group of sixteen rows is
// one sequential stream of super-block columns, column j (2304 bytes =
// 16·144) holding super-block j of every row of the group so that each
// row's values sit in one 32-bit lane of a 512-bit register:
//
//	   0: d of rows 0..15 (f16)
//	  32: dmin of rows 0..15 (f16)
//	  64: scale byte b (0..11) of rows 0..15: 16 bytes a byte b
//	 256: quant chunk c (0..31) of rows 0..15: row r's qs bytes 4c..4c+3
//	      at 256 + 64c + 4r
//
// A chunk then meets the token's four quants by one VPDPBUSD with the
// quants broadcast, every lane ending a sub-block with its row's sum, and
// the scales, mins and float epilogue run in lanes: no horizontal
// reduction. The bytes are the file's, moved; a group keeps its size.

// c16ColQ4K is one c16 column: sixteen Q4_K super-blocks.
const c16ColQ4K = 16 * bytesQ4K

// The Q6_K c16 layout: column j (3360 bytes = 16·210) holds super-block j
// of the group's sixteen rows:
//
//	   0: d of rows 0..15 (f16)
//	  32: scale j (0..15) of rows 0..15 (int8): 16 bytes a scale
//	 288: ql chunk c (0..31) of rows 0..15: row r's ql bytes 4c..4c+3 at
//	      288 + 64c + 4r
//	2336: qh chunk c (0..15) of rows 0..15: row r's qh bytes 4c..4c+3 at
//	      2336 + 64c + 4r

// c16ColQ6K is one Q6_K c16 column: sixteen Q6_K super-blocks.
const c16ColQ6K = 16 * bytesQ6K

// c16KLayout describes a K type's c16 layout: a super-block of bs bytes is
// pieces of n elements of w bytes each (1, 2 or 4), element k of the piece
// at fo + w·k in the super-block and, for row r, at co + 16·w·k + w·r in
// its column; one is the type's one-row generic kernel.
type c16KLayout struct {
	bs     int
	pieces []c16Piece
	one    func(w, x []byte) float32
}

type c16Piece struct{ fo, co, w, n int }

var (
	c16Q4K = c16KLayout{bytesQ4K, []c16Piece{{0, 0, 2, 1}, {2, 32, 2, 1}, {4, 64, 1, 12}, {16, 256, 4, 32}}, dotQ4_KQ8_KGeneric}
	c16Q6K = c16KLayout{bytesQ6K, []c16Piece{{208, 0, 2, 1}, {192, 32, 1, 16}, {0, 288, 4, 32}, {128, 2336, 4, 16}}, dotQ6_KQ8_KGeneric}
)

// c16KFor is the c16 layout of K type t, nil for the others.
func c16KFor(t gguf.GGMLType) *c16KLayout {
	switch t {
	case gguf.TypeQ4_K:
		return &c16Q4K
	case gguf.TypeQ6_K:
		return &c16Q6K
	}
	return nil
}

// rowBlock copies row r's super-block out of the column col into sb (file
// layout, bs bytes), or into col from sb when toCol.
func (l *c16KLayout) rowBlock(col []byte, r int, sb []byte, toCol bool) {
	col, sb = col[:16*l.bs], sb[:l.bs]
	le := binary.LittleEndian
	for _, p := range l.pieces {
		f, c, step := p.fo, p.co+p.w*r, 16*p.w
		switch {
		case p.w == 4 && toCol:
			for k := 0; k < p.n; k++ {
				le.PutUint32(col[c+step*k:], le.Uint32(sb[f+4*k:]))
			}
		case p.w == 4:
			for k := 0; k < p.n; k++ {
				le.PutUint32(sb[f+4*k:], le.Uint32(col[c+step*k:]))
			}
		case p.w == 2 && toCol:
			for k := 0; k < p.n; k++ {
				le.PutUint16(col[c+step*k:], le.Uint16(sb[f+2*k:]))
			}
		case p.w == 2:
			for k := 0; k < p.n; k++ {
				le.PutUint16(sb[f+2*k:], le.Uint16(col[c+step*k:]))
			}
		case toCol:
			for k := 0; k < p.n; k++ {
				col[c+step*k] = sb[f+k]
			}
		default:
			for k := 0; k < p.n; k++ {
				sb[f+k] = col[c+step*k]
			}
		}
	}
}

// move copies the super-blocks of a group of sixteen rows of nb
// super-blocks between the file layout (file) and the c16 layout (c16):
// into c16 when toC16, else back into file.
func (l *c16KLayout) move(file, c16 []byte, nb int, toC16 bool) {
	wrb, cb := nb*l.bs, 16*l.bs
	file, c16 = file[:16*wrb], c16[:16*wrb]
	for j := 0; j < nb; j++ { // a column at a time: its 16 rows' blocks and it stay in L1
		for r := 0; r < 16; r++ {
			l.rowBlock(c16[j*cb:(j+1)*cb], r, file[r*wrb+j*l.bs:r*wrb+(j+1)*l.bs], toC16)
		}
	}
}

// dotRow is the dot of row r (0..15) of the c16 group w against x, the
// one-row generic sequence (one) on the row's super-blocks: each generic
// call returns 0 plus the block's term, that term exactly, added here in
// block order as the row's Dot adds it.
func (l *c16KLayout) dotRow(w []byte, r int, x []byte) float32 {
	cb := 16 * l.bs
	nb := len(w) / cb
	var buf [bytesQ6K]byte // the larger super-block
	sb := buf[:l.bs]
	var sum float32
	for j := 0; j < nb; j++ {
		l.rowBlock(w[j*cb:(j+1)*cb], r, sb, false)
		sum += l.one(sb, x[j*bytesQ8K:(j+1)*bytesQ8K])
	}
	return sum
}

// rows16 is the Go twin of the type's c16 decode kernel: each of the
// sixteen rows of the group w against one token x by dotRow, so the bits
// are the row's Dot.
func (l *c16KLayout) rows16(w, x []byte, out *[16]float32) {
	for r := range out {
		out[r] = l.dotRow(w, r, x)
	}
}

// gather4 writes rows 4q..4q+3 of each column of the c16 group (nb
// columns) into dst in the file layout: the four rows' super-blocks of
// column j one after another at 4·bs·j (the K x8 half layout).
func (l *c16KLayout) gather4(group []byte, q, nb int, dst []byte) {
	cb := 16 * l.bs
	for j := 0; j < nb; j++ {
		for i := 0; i < 4; i++ {
			o := (4*j + i) * l.bs
			l.rowBlock(group[j*cb:(j+1)*cb], 4*q+i, dst[o:o+l.bs], false)
		}
	}
}

// prep4x16Q4KGeneric is prep4Q4_K's preparation (prep4Q4_KBlock bytes a
// super-block) of rows 4q..4q+3 of a c16 Q4_K group as it lies.
func prep4x16Q4KGeneric(group []byte, q int, u []byte) {
	nb := len(u) / prep4Q4_KBlock
	var sb [4 * bytesQ4K]byte
	for j := 0; j < nb; j++ {
		c16Q4K.gather4(group[j*c16ColQ4K:(j+1)*c16ColQ4K], q, 1, sb[:])
		prep4Q4_KAdv(sb[:], bytesQ4K, 0, u[j*prep4Q4_KBlock:(j+1)*prep4Q4_KBlock])
	}
}
