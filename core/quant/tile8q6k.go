package quant

import (
	"encoding/binary"
	"math"
)

// Eight-token tiles for Q6_K weights (see tile8.go for the scheme).
//
// The one-token kernel multiplies the unsigned 6-bit values (0..63) with
// the signed Q8_K quants and takes 32·Σ scale·bsum off per token. The tile
// kernel turns the sides round: the weights are prepared once per row quad
// as signed bytes w = q6−32 (−32..31) and the tile holds the activations as
// unsigned bytes x+128 (0..255, the quant's bits XOR 0x80), so that
//
//	Σ_j sc_j·Σ_{i∈j} w_i·(x_i+128) = isum + 128·Σ_j sc_j·Σ_{i∈j} w_i
//
// and the second term, C, depends on the row alone: it is computed with
// the preparation and taken off once per (row, token) and super-block,
// with no per-token sub-block sums at all. isum is the one-token kernel's
// integer (exact in int32: |isum + C| ≤ 16·128·16·32·255 < 2³¹), and the
// float step is the same, sum += (d·d_x)·float32(isum), so every result is
// bit-identical to the one-token kernels.
//
// A pair product w·(x+128) is at most 2·32·255 = 16320 in magnitude, so
// two chunks' pair sums add up in int16 before the scale multiply.
//
// Tile, per super-block (tile8Q6KBlock bytes):
//
//	 0: d_x of the eight tokens, float32
//	32: the quants XOR 0x80, 64 chunks of 32 bytes: chunk c holds quants
//	    4c..4c+3 of token 0, then of token 1, …, of token 7
//
// Four prepared rows, per super-block (prep4Q6_KBlock bytes):
//
//	   0: per sub-block s of 32 (0..7), per row r, its 32 values q6−32 as
//	      int8 in element order, at 128·s+32·r
//	1024: per row r, per sub-block j of 16 (0..15), the int8 scale as
//	      int16, twice, at 1024+64·r+4·j
//	1280: per row r, d as float32
//	1296: per row r, C as int32
const (
	tile8Q6KBlock  = 2080
	tile8Q6KQuant  = 32
	prep4Q6_KBlock = 1312
)

func packTile8Q6_K(x []byte, xrb, nb int, tile []byte) {
	for b := 0; b < nb; b++ {
		e := tile[b*tile8Q6KBlock : (b+1)*tile8Q6KBlock : (b+1)*tile8Q6KBlock]
		for t := 0; t < 8; t++ {
			xb := x[t*xrb+b*bytesQ8K : t*xrb+(b+1)*bytesQ8K : t*xrb+(b+1)*bytesQ8K]
			copy(e[4*t:4*t+4], xb[:4])
			for c := 0; c < 64; c++ {
				v := binary.LittleEndian.Uint32(xb[4+4*c:]) ^ 0x80808080
				binary.LittleEndian.PutUint32(e[tile8Q6KQuant+32*c+4*t:], v)
			}
		}
	}
}

// q6KValue is element i (0..255) of a Q6_K super-block wb as q6−32 (see
// dotQ6_KQ8_KGeneric for the bit layout).
func q6KValue(wb []byte, i int) int32 {
	half, g, l := i/128, i%128/32, i%32
	ql := wb[64*half : 64*half+64]
	h := wb[128+32*half+l]
	lo := ql[l+32*(g%2)]
	var q byte
	if g < 2 {
		q = lo & 0xf
	} else {
		q = lo >> 4
	}
	// qh: bits 0–1 for group 0, 2–3 for group 1, 4–5 for 2, 6–7 for 3.
	q |= (h >> (2 * g) & 3) << 4
	return int32(q) - 32
}

// prep4Q6_KGeneric prepares four Q6_K rows (wstride apart) for the tile
// kernel.
func prep4Q6_KGeneric(w []byte, wstride int, u []byte) { prep4Q6_KAdv(w, wstride, bytesQ6K, u) }

// prep4x8Q6_KGeneric is prep4x8Q4_KGeneric for Q6_K.
func prep4x8Q6_KGeneric(group []byte, half int, u []byte) {
	h := 4 * len(u) / prep4Q6_KBlock * bytesQ6K
	prep4Q6_KAdv(group[half*h:(half+1)*h], bytesQ6K, 4*bytesQ6K, u)
}

// prep4Q6_KAdv prepares four Q6_K rows whose super-block b of row r is at
// r·wstride + b·adv in w.
func prep4Q6_KAdv(w []byte, wstride, adv int, u []byte) {
	nb := len(u) / prep4Q6_KBlock
	for b := 0; b < nb; b++ {
		e := u[b*prep4Q6_KBlock : (b+1)*prep4Q6_KBlock : (b+1)*prep4Q6_KBlock]
		for r := 0; r < 4; r++ {
			wb := w[r*wstride+b*adv : r*wstride+b*adv+bytesQ6K : r*wstride+b*adv+bytesQ6K]
			putF32(e[1280+4*r:], f16le(wb[208:]))
			var c int32
			for j := 0; j < 16; j++ {
				sc := int32(int8(wb[192+j]))
				binary.LittleEndian.PutUint32(e[1024+64*r+4*j:], uint32(uint16(sc))*0x10001)
				var sw int32
				for i := 16 * j; i < 16*j+16; i++ {
					v := q6KValue(wb, i)
					e[128*(i/32)+32*r+i%32] = byte(int8(v))
					sw += v
				}
				c += sc * sw
			}
			binary.LittleEndian.PutUint32(e[1296+4*r:], uint32(128*c))
		}
	}
}

// dotR4x8Q6_KQ8_KGeneric is the Go twin of the four-row eight-token Q6_K
// kernel, from the prepared rows and the tile as the assembly reads them:
//
//	sum += (d·d_x)·float32(Σ_j sc_j·Σ w·(x+128) − C)
func dotR4x8Q6_KQ8_KGeneric(_ []byte, _ int, u, tile []byte, out *[32]float32) {
	nb := len(tile) / tile8Q6KBlock
	for r := 0; r < 4; r++ {
		for t := 0; t < 8; t++ {
			var sum float32
			for b := 0; b < nb; b++ {
				e := tile[b*tile8Q6KBlock : (b+1)*tile8Q6KBlock]
				p := u[b*prep4Q6_KBlock : (b+1)*prep4Q6_KBlock]
				var isum int32
				for j := 0; j < 16; j++ {
					sc := int32(int16(binary.LittleEndian.Uint16(p[1024+64*r+4*j:])))
					var si int32
					for i := 16 * j; i < 16*j+16; i++ {
						w := int32(int8(p[128*(i/32)+32*r+i%32]))
						xu := int32(e[tile8Q6KQuant+32*(i/4)+4*t+i%4])
						si += w * xu
					}
					isum += sc * si
				}
				isum -= int32(binary.LittleEndian.Uint32(p[1296+4*r:]))
				dx := math.Float32frombits(binary.LittleEndian.Uint32(e[4*t:]))
				sum += float32((f32le(p[1280+4*r:]) * dx) * float32(isum))
			}
			out[8*r+t] = sum
		}
	}
}
