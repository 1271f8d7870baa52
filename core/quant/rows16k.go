package quant

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

// moveC16Q4K copies the super-blocks of a group of sixteen Q4_K rows of nb
// super-blocks between the file layout (file) and the c16 layout (c16):
// into c16 when toC16, else back into file.
func moveC16Q4K(file, c16 []byte, nb int, toC16 bool) {
	wrb := nb * bytesQ4K
	file, c16 = file[:16*wrb], c16[:16*wrb]
	for r := 0; r < 16; r++ {
		for j := 0; j < nb; j++ {
			f := file[r*wrb+j*bytesQ4K : r*wrb+(j+1)*bytesQ4K]
			col := c16[j*c16ColQ4K : (j+1)*c16ColQ4K]
			mv := func(fo, co, n int) {
				if toC16 {
					copy(col[co:co+n], f[fo:fo+n])
				} else {
					copy(f[fo:fo+n], col[co:co+n])
				}
			}
			mv(0, 2*r, 2)
			mv(2, 32+2*r, 2)
			for b := 0; b < 12; b++ {
				mv(4+b, 64+16*b+r, 1)
			}
			for c := 0; c < 32; c++ {
				mv(16+4*c, 256+64*c+4*r, 4)
			}
		}
	}
}

// rows16C16Q4KGeneric is the Go twin of the c16 Q4_K decode kernel: the
// sixteen rows of the c16 group w (nb columns) against one token x, each
// row's value the one-row generic sequence (dotQ4_KQ8_KGeneric) on its
// super-blocks, so the bits are the row's Dot.
func rows16C16Q4KGeneric(w, x []byte, out *[16]float32) {
	for r := range out {
		out[r] = dotRowC16Q4K(w, r, x)
	}
}

// dotRowC16Q4K is the dot of row r (0..15) of the c16 group w against x,
// the one-row generic sequence (dotQ4_KQ8_KGeneric) on the row's
// super-blocks: each generic call returns 0 plus the block's term, that
// term exactly, added here in block order as the row's Dot adds it.
func dotRowC16Q4K(w []byte, r int, x []byte) float32 {
	nb := len(w) / c16ColQ4K
	var sb [bytesQ4K]byte
	var sum float32
	for j := 0; j < nb; j++ {
		c16RowBlock(w[j*c16ColQ4K:(j+1)*c16ColQ4K], r, sb[:])
		sum += dotQ4_KQ8_KGeneric(sb[:], x[j*bytesQ8K:(j+1)*bytesQ8K])
	}
	return sum
}

// prep4x16Q4KGeneric is prep4Q4_K's preparation (prep4Q4_KBlock bytes a
// super-block) of rows 4q..4q+3 of a c16 Q4_K group as it lies.
func prep4x16Q4KGeneric(group []byte, q int, u []byte) {
	nb := len(u) / prep4Q4_KBlock
	var sb [4 * bytesQ4K]byte
	for j := 0; j < nb; j++ {
		col := group[j*c16ColQ4K : (j+1)*c16ColQ4K]
		for i := 0; i < 4; i++ {
			c16RowBlock(col, 4*q+i, sb[i*bytesQ4K:(i+1)*bytesQ4K])
		}
		prep4Q4_KAdv(sb[:], bytesQ4K, 0, u[j*prep4Q4_KBlock:(j+1)*prep4Q4_KBlock])
	}
}

// c16RowBlock copies row r's super-block out of the c16 column col into
// sb (file layout, bytesQ4K).
func c16RowBlock(col []byte, r int, sb []byte) {
	sb[0], sb[1] = col[2*r], col[2*r+1]
	sb[2], sb[3] = col[32+2*r], col[33+2*r]
	for b := 0; b < 12; b++ {
		sb[4+b] = col[64+16*b+r]
	}
	for c := 0; c < 32; c++ {
		copy(sb[16+4*c:20+4*c], col[256+64*c+4*r:])
	}
}

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

// c16Q6KRowBlock copies row r's super-block out of the Q6_K c16 column col
// into sb (file layout, bytesQ6K), or into col from sb when toCol.
func c16Q6KRowBlock(col []byte, r int, sb []byte, toCol bool) {
	mv := func(fo, co, n int) {
		if toCol {
			copy(col[co:co+n], sb[fo:fo+n])
		} else {
			copy(sb[fo:fo+n], col[co:co+n])
		}
	}
	mv(208, 2*r, 2)
	for j := 0; j < 16; j++ {
		mv(192+j, 32+16*j+r, 1)
	}
	for c := 0; c < 32; c++ {
		mv(4*c, 288+64*c+4*r, 4)
	}
	for c := 0; c < 16; c++ {
		mv(128+4*c, 2336+64*c+4*r, 4)
	}
}

// moveC16Q6K is moveC16Q4K for Q6_K.
func moveC16Q6K(file, c16 []byte, nb int, toC16 bool) {
	wrb := nb * bytesQ6K
	file, c16 = file[:16*wrb], c16[:16*wrb]
	for r := 0; r < 16; r++ {
		for j := 0; j < nb; j++ {
			c16Q6KRowBlock(c16[j*c16ColQ6K:(j+1)*c16ColQ6K], r, file[r*wrb+j*bytesQ6K:r*wrb+(j+1)*bytesQ6K], toC16)
		}
	}
}

// dotRowC16Q6K is dotRowC16Q4K for Q6_K (dotQ6_KQ8_KGeneric's sequence).
func dotRowC16Q6K(w []byte, r int, x []byte) float32 {
	nb := len(w) / c16ColQ6K
	var sb [bytesQ6K]byte
	var sum float32
	for j := 0; j < nb; j++ {
		c16Q6KRowBlock(w[j*c16ColQ6K:(j+1)*c16ColQ6K], r, sb[:], false)
		sum += dotQ6_KQ8_KGeneric(sb[:], x[j*bytesQ8K:(j+1)*bytesQ8K])
	}
	return sum
}

// rows16C16Q6KGeneric is the Go twin of the c16 Q6_K decode kernel.
func rows16C16Q6KGeneric(w, x []byte, out *[16]float32) {
	for r := range out {
		out[r] = dotRowC16Q6K(w, r, x)
	}
}

// gather4C16Q6K writes rows 4q..4q+3 of each column of the Q6_K c16 group
// (nb columns) into dst in the file layout: the four rows' super-blocks
// of column j one after another at 4·210·j (the K x8 half layout).
func gather4C16Q6KGeneric(group []byte, q, nb int, dst []byte) {
	for j := 0; j < nb; j++ {
		col := group[j*c16ColQ6K : (j+1)*c16ColQ6K]
		for i := 0; i < 4; i++ {
			o := (4*j + i) * bytesQ6K
			c16Q6KRowBlock(col, 4*q+i, dst[o:o+bytesQ6K], false)
		}
	}
}
