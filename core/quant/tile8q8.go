package quant

import "encoding/binary"

// The AVX2 level's Q8_0 eight-token tiles keep each quant's magnitude
// beside it (kernelSet.tile8Q8_0Abs; the AVX512 level's VNNI kernels
// multiply signed by unsigned directly and keep tile8Block's form).
//
// On AVX2 a signed·signed byte product needs one side unsigned for
// VPMADDUBSW. ggml makes the weight unsigned (|w| against x·sign(w)), which
// costs a VPSIGNB per weight chunk for |w| on top of the one per (row,
// tile). A tile8Abs tile stores |x| beside x, so the kernel takes |x| as the
// unsigned side and gives the broadcast weight x's sign (w·sign(x)): the
// same integer products and pair sums, one VPSIGNB per (row, tile) and
// chunk and none per row. Per block, a 576-byte entry:
//
//	  0: d_x of the eight tokens, float32
//	 32: 8·Σq of the eight tokens, int32 (as tile8Block; unused by Q8_0)
//	 64: 8 chunks of 64 bytes: chunk c holds quants 4c..4c+3 of tokens
//	     0..7 (32 bytes, tile8Block's chunk), then their magnitudes |q|
//
// w·sign(x) is exact except for a weight quant of −128 against a negative
// x (−(−128) does not fit a byte). ggml's quantizer never writes −128, but
// a file may hold it: Prep4 scans each row quad for it (scan4Q8_0), and
// the pair kernel of a quad that has one takes ggml's |w| form instead.
// Activation quants are never −128 (QuantizeRow rounds to ±127).

const tile8AbsBlock = 576 // bytes per block of a Q8_0 tile

func packTile8Q8_0Abs(x []byte, xrb, nb int, tile []byte) {
	for b := 0; b < nb; b++ {
		e := tile[b*tile8AbsBlock : (b+1)*tile8AbsBlock : (b+1)*tile8AbsBlock]
		for t := 0; t < 8; t++ {
			xb := x[t*xrb+b*bytesQ80 : t*xrb+(b+1)*bytesQ80 : t*xrb+(b+1)*bytesQ80]
			d, s8 := q8_0Facts(xb)
			putF32(e[4*t:], d)
			binary.LittleEndian.PutUint32(e[32+4*t:], s8)
			for c := 0; c < 8; c++ {
				o := tile8Quant + 64*c + 4*t
				v := binary.LittleEndian.Uint32(xb[2+4*c:])
				binary.LittleEndian.PutUint32(e[o:], v)
				binary.LittleEndian.PutUint32(e[o+32:], abs4(v))
			}
		}
	}
}

// abs4 is the magnitudes of the four int8 in v, byte by byte (−128 gives
// 128): a negative byte b becomes ^b + 1, which stays within its byte
// (at most 0x80), so no carry crosses into the next.
func abs4(v uint32) uint32 {
	m := (v >> 7 & 0x01010101) * 0xff // 0xff in each negative byte
	return v ^ m + m&0x01010101
}

// tile8AbsQ reads token t's quant j (0..31) from a tile8Abs block.
func tile8AbsQ(e []byte, t, j int) int32 {
	return int32(int8(e[tile8Quant+64*(j/4)+4*t+j%4]))
}

// scan4Q8_0Generic sets u[0] to 1 when a weight quant of the four Q8_0
// rows (wstride apart, len(u) blocks each) is −128, else 0.
func scan4Q8_0Generic(w []byte, wstride int, u []byte) {
	nb := len(u)
	if nb == 0 {
		return
	}
	u[0] = 0
	for r := 0; r < 4; r++ {
		for b := 0; b < nb; b++ {
			for _, q := range w[r*wstride+b*bytesQ80+2 : r*wstride+(b+1)*bytesQ80] {
				if q == 0x80 {
					u[0] = 1
					return
				}
			}
		}
	}
}

// dotR4x8Q8_0Q8_0AbsGeneric is dotR4x8Q8_0Q8_0Generic on a tile8Abs tile.
func dotR4x8Q8_0Q8_0AbsGeneric(w []byte, wstride int, _, tile []byte, out *[32]float32) {
	dotR4x8Q8_0Tiles(w, wstride, tile, tile8AbsBlock, tile8AbsQuants, out)
}

// tile8AbsQuants reads token t's 32 quants from a tile8Abs block.
func tile8AbsQuants(e []byte, t int, xq *[32]int32) {
	for j := range xq {
		xq[j] = tile8AbsQ(e, t, j)
	}
}

// ScansRows reports whether Prep4 only scans the rows for a −128 quant
// (Q8_0 on tile8Abs tiles), so that a caller that knows a whole weight
// free of them (RowsFree, once per weight) can skip the scan (Prep4Free).
func (k *Kernel) ScansRows() bool { return k.t8.scan }

// RowsFree reports whether no quant of the weight rows in w (whole rows,
// a multiple of four of them) is −128, scanning four rows at a time into
// u (Prep4Bytes long). False when the kernel does not scan.
func (k *Kernel) RowsFree(w, u []byte) bool {
	if !k.t8.scan {
		return false
	}
	for r := 0; r+4 <= len(w)/k.wrb; r += 4 {
		k.Prep4(w[r*k.wrb:(r+4)*k.wrb], u)
		if u[0] != 0 {
			return false
		}
	}
	return len(w)/k.wrb%4 == 0
}

// Prep4Free is Prep4 for rows that RowsFree found free of −128: a
// scanning kernel's flag is cleared without reading them.
func (k *Kernel) Prep4Free(w, u []byte) {
	if k.t8.scan {
		if len(u) > 0 {
			u[0] = 0
		}
		return
	}
	k.Prep4(w, u)
}
