package quant

import (
	"encoding/binary"
	"math"
)

// Eight-token tiles of Q8_K activations, for Q4_K weights (see tile8.go).
// Per super-block a tile holds 2208 bytes:
//
//	  0: d_x of the eight tokens, float32
//	 32: for each pair p of sub-blocks of 32 (0..3), per token the two
//	     int16 sums of its quants over sub-blocks 2p and 2p+1
//	160: the quants, 64 chunks of 32 bytes: chunk c holds quants
//	     4c..4c+3 of token 0, then of token 1, …, of token 7
//
// Four Q4_K rows are prepared once per row quad (prep4Q4_KGeneric and its
// AVX2 twin), 1248 bytes per super-block:
//
//	   0: per sub-block s (0..7), per row r, its 32 nibbles as bytes
//	1024: per row r, per sub-block s, the 6-bit scale twice as int16
//	1152: per row r, the mins of its eight sub-blocks as int16
//	1216: per row d, then at 1232 per row dmin, float32
const (
	tile8KBlock    = 2208
	tile8KQuant    = 160
	prep4Q4_KBlock = 1248
)

func packTile8Q8_K(x []byte, xrb, nb int, tile []byte) {
	for b := 0; b < nb; b++ {
		e := tile[b*tile8KBlock : (b+1)*tile8KBlock : (b+1)*tile8KBlock]
		for t := 0; t < 8; t++ {
			xb := x[t*xrb+b*bytesQ8K : t*xrb+(b+1)*bytesQ8K : t*xrb+(b+1)*bytesQ8K]
			copy(e[4*t:4*t+4], xb[:4])
			for s := 0; s < 8; s++ {
				bs := q8KBsum(xb, 2*s) + q8KBsum(xb, 2*s+1)
				binary.LittleEndian.PutUint16(e[32+32*(s/2)+4*t+2*(s%2):], uint16(bs))
			}
			for c := 0; c < 64; c++ {
				binary.LittleEndian.PutUint32(e[tile8KQuant+32*c+4*t:], binary.LittleEndian.Uint32(xb[4+4*c:]))
			}
		}
	}
}

// prep4Q4_KGeneric prepares four Q4_K rows (wstride apart) for the tile
// kernel.
func prep4Q4_KGeneric(w []byte, wstride int, u []byte) { prep4Q4_KAdv(w, wstride, bytesQ4K, u) }

// prep4x8Q4_KGeneric prepares the four rows of one half (0 or 1) of the K
// x8 group in group (rows8k.go: each half 4·nb super-blocks, nb from u's
// length) for the tile kernel.
func prep4x8Q4_KGeneric(group []byte, half int, u []byte) {
	h := 4 * len(u) / prep4Q4_KBlock * bytesQ4K
	prep4Q4_KAdv(group[half*h:(half+1)*h], bytesQ4K, 4*bytesQ4K, u)
}

// prep4Q4_KAdv prepares four Q4_K rows whose super-block b of row r is at
// r·wstride + b·adv in w.
func prep4Q4_KAdv(w []byte, wstride, adv int, u []byte) {
	nb := len(u) / prep4Q4_KBlock
	for b := 0; b < nb; b++ {
		e := u[b*prep4Q4_KBlock : (b+1)*prep4Q4_KBlock : (b+1)*prep4Q4_KBlock]
		for r := 0; r < 4; r++ {
			wb := w[r*wstride+b*adv : r*wstride+b*adv+bytesQ4K : r*wstride+b*adv+bytesQ4K]
			putF32(e[1216+4*r:], f16le(wb))
			putF32(e[1232+4*r:], f16le(wb[2:]))
			// The 6-bit scales and mins of the eight sub-blocks, four bytes
			// at a time (scaleMinK4 for all of them).
			a := binary.LittleEndian.Uint32(wb[4:])
			bb := binary.LittleEndian.Uint32(wb[8:])
			c := binary.LittleEndian.Uint32(wb[12:])
			scs := uint64(a&0x3f3f3f3f) | uint64(c&0x0f0f0f0f|(a>>6&0x03030303)<<4)<<32
			mins := uint64(bb&0x3f3f3f3f) | uint64(c>>4&0x0f0f0f0f|(bb>>6&0x03030303)<<4)<<32
			for s := 0; s < 8; s++ {
				sc := uint32(scs >> (8 * s) & 0xff)
				binary.LittleEndian.PutUint32(e[1024+32*r+4*s:], sc|sc<<16)
				binary.LittleEndian.PutUint16(e[1152+16*r+2*s:], uint16(mins>>(8*s)&0xff))
			}
			for j := 0; j < 4; j++ {
				// Group j's 32 bytes: low nibbles are sub-block 2j, high 2j+1.
				q := wb[16+32*j : 48+32*j]
				lo := e[(2*j)*128+32*r : (2*j)*128+32*r+32]
				hi := e[(2*j+1)*128+32*r : (2*j+1)*128+32*r+32]
				for i := 0; i < 32; i += 8 {
					v := binary.LittleEndian.Uint64(q[i:])
					binary.LittleEndian.PutUint64(lo[i:], v&0x0f0f0f0f0f0f0f0f)
					binary.LittleEndian.PutUint64(hi[i:], v>>4&0x0f0f0f0f0f0f0f0f)
				}
			}
		}
	}
}

// dotR4x8Q4_KQ8_KGeneric is the Go twin of the four-row eight-token Q4_K
// kernel, from the prepared rows and the tile as the assembly reads them:
//
//	sum += (d_x·d)·Σ sc·Σ q4·q8 − (d_x·dmin)·Σ m·(sub-block sum of q8)
func dotR4x8Q4_KQ8_KGeneric(_ []byte, _ int, u, tile []byte, out *[32]float32) {
	nb := len(tile) / tile8KBlock
	for r := 0; r < 4; r++ {
		for t := 0; t < 8; t++ {
			var sum float32
			for b := 0; b < nb; b++ {
				e := tile[b*tile8KBlock : (b+1)*tile8KBlock]
				p := u[b*prep4Q4_KBlock : (b+1)*prep4Q4_KBlock]
				var isum, summs int32
				for s := 0; s < 8; s++ {
					sc := int32(int16(binary.LittleEndian.Uint16(p[1024+32*r+4*s:])))
					m := int32(int16(binary.LittleEndian.Uint16(p[1152+16*r+2*s:])))
					bs := int32(int16(binary.LittleEndian.Uint16(e[32+32*(s/2)+4*t+2*(s%2):])))
					var si int32
					for l := 0; l < 32; l++ {
						c := 8*s + l/4
						si += int32(p[128*s+32*r+l]) * int32(int8(e[tile8KQuant+32*c+4*t+l%4]))
					}
					isum += sc * si
					summs += m * bs
				}
				dx := math.Float32frombits(binary.LittleEndian.Uint32(e[4*t:]))
				d := dx * f32le(p[1216+4*r:])
				dmin := dx * f32le(p[1232+4*r:])
				sum += float32(float32(d*float32(isum)) - float32(dmin*float32(summs)))
			}
			out[8*r+t] = sum
		}
	}
}
