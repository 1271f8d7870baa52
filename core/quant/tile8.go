package quant

import (
	"encoding/binary"
	"math"

	"github.com/minfer/minfer/gguf"
)

// Eight-token tiles for the prefill GEMM of Q4_0, Q8_0, Q4_K and Q6_K
// weights (the tiles of Q8_K activations: tile8k.go for Q4_K, tile8q6k.go
// for Q6_K).
//
// A tile holds eight Q8_0 activation rows rearranged once per mat-mul so
// that a kernel can put the eight tokens in the eight lanes of a vector:
// per block, a 320-byte entry (the AVX2 level's Q8_0 kernels take the
// 576-byte tile8Abs form of tile8q8.go, which adds the quants' magnitudes)
//
//	  0: d_x of the eight tokens, float32
//	 32: 8·Σq of the eight tokens, int32 (Q4_0's nibble offset, exact)
//	 64: the quants, 8 chunks of 32 bytes: chunk c holds quants 4c..4c+3
//	     of token 0, then of token 1, …, of token 7
//
// A weight row's four quants of chunk c, broadcast to every lane, then meet
// the eight tokens' matching quants in one multiply. The weights stay in
// the GGUF layout; Q4_0 and Q4_K rows are prepared four at a time
// (nibbles unpacked to bytes, K-quant scales decoded) into a small scratch
// that serves every tile, so the preparation is paid once per row and
// mat-mul, and no repacked copy of the model is kept. Each output lane
// still runs the one-token sequence of its (row, token) pair block by
// block, so results are bit-identical to the one-token kernels.

const (
	tile8Block = 320 // bytes per block of an eight-token tile
	tile8Quant = 64  // offset of the quants in a tile block
)

// tile8Kernel is one weight type's eight-token tile form at a level.
type tile8Kernel struct {
	// dot: four weight rows (wstride apart; prepared into u by prep where
	// prep is set) against a tile; out[8·r+t] is row r's dot with token t.
	dot func(w []byte, wstride int, u, tile []byte, out *[32]float32)
	// prep prepares four weight rows for dot (nil: dot reads w alone).
	prep func(w []byte, wstride int, u []byte)
	// prepX8, where set, is prep for one half (0: rows 0..3, 1: rows
	// 4..7) of an x8 group as it lies (rows8i.go, rows8k.go): for the K
	// types, whose dot, pair and quad read u alone, and for Q4_0 and Q8_0
	// at a level whose quad does.
	prepX8 func(group []byte, half int, u []byte)
	// pack builds a tile from eight activation rows (xrb apart) of nb
	// blocks.
	pack func(x []byte, xrb, nb int, tile []byte)
	// pair, where set: rows r0 and r0+1 of the four (wstride apart,
	// prepared in u) against two tiles, row r0+i's results for ta at
	// out[8i:8i+8], for tb at out[32+8i:32+8i+8].
	pair func(w []byte, wstride int, u []byte, r0 int, ta, tb []byte, out []float32)
	// quad, where set: all four rows against two tiles, row r's results
	// for ta at out[8r:8r+8], for tb at out[32+8r:32+8r+8] (one pass over
	// the tiles instead of pair's two).
	quad func(w []byte, wstride int, u []byte, ta, tb []byte, out []float32)
	// oct, where set: two quads' preparations (u0, u1; read alone) against
	// two tiles, each quad's results as quad lays them out (out0, out1).
	oct func(u0, u1, ta, tb []byte, out0, out1 []float32)
	// Block sizes: elements of a weight block, tile and prep bytes per block.
	qk, tileBlock, prepBlock int
	// scan: prep only flags a row quad holding a −128 quant (tile8q8.go).
	scan bool
}

// HasTile8 reports whether the kernel has an eight-token tile form at
// its level.
func (k *Kernel) HasTile8() bool { return k.t8.dot != nil }

// Tile8Bytes is the size of one eight-token tile (PackTile8), 0 when this
// kernel has no eight-token form.
func (k *Kernel) Tile8Bytes() int {
	if k.t8.dot == nil {
		return 0
	}
	return k.n / k.t8.qk * k.t8.tileBlock
}

// PackTile8 fills tile (Tile8Bytes long) from the eight activation rows in
// x (ActRowBytes apart).
func (k *Kernel) PackTile8(x, tile []byte) {
	if k.t8.dot == nil {
		return
	}
	nb := k.n / k.t8.qk
	k.t8.pack(x[:8*k.xrb:8*k.xrb], k.xrb, nb, tile[:nb*k.t8.tileBlock])
}

func packTile8Q8_0(x []byte, xrb, nb int, tile []byte) {
	for b := 0; b < nb; b++ {
		e := tile[b*tile8Block : (b+1)*tile8Block : (b+1)*tile8Block]
		for t := 0; t < 8; t++ {
			xb := x[t*xrb+b*bytesQ80 : t*xrb+(b+1)*bytesQ80 : t*xrb+(b+1)*bytesQ80]
			d, s8 := q8_0Facts(xb)
			putF32(e[4*t:], d)
			binary.LittleEndian.PutUint32(e[32+4*t:], s8)
			for c := 0; c < 8; c++ {
				binary.LittleEndian.PutUint32(e[tile8Quant+32*c+4*t:], binary.LittleEndian.Uint32(xb[2+4*c:]))
			}
		}
	}
}

// Prep4Bytes is the size of the four-row weight preparation Prep4 fills
// for Dot4RowsTile8, 0 when the kernel takes none.
func (k *Kernel) Prep4Bytes() int {
	if k.t8.prep == nil {
		return 0
	}
	return k.n / k.t8.qk * k.t8.prepBlock
}

// Prep4 fills u (Prep4Bytes long) for the four consecutive weight rows in w.
func (k *Kernel) Prep4(w, u []byte) {
	if k.t8.prep == nil {
		return
	}
	k.t8.prep(w[:4*k.wrb:4*k.wrb], k.wrb, u[:k.n/k.t8.qk*k.t8.prepBlock])
}

// Prep4X8 is Prep4 for the four rows of one half (0: rows 0..3, 1: rows
// 4..7) of the x8 group in group (8·WeightRowBytes; rows8i.go, rows8k.go)
// as it lies; it reports false, preparing nothing, where the kernel has no
// such form (HasPrep4X8).
func (k *Kernel) Prep4X8(group []byte, half int, u []byte) bool {
	if k.t8.prepX8 == nil {
		return false
	}
	k.t8.prepX8(group[:8*k.wrb:8*k.wrb], half, u[:k.Prep4Bytes()])
	return true
}

// HasPrep4X8 reports whether the tile kernels run on x8 groups as they lie
// (Prep4X8, then Dot4RowsTiles8X8, which reads the preparation alone).
func (k *Kernel) HasPrep4X8() bool { return k.t8.prepX8 != nil }

// HasOct reports whether the kernel runs two prepared row quads at once
// (Dot8RowsTiles8).
func (k *Kernel) HasOct() bool { return k.t8.oct != nil }

// Dot8RowsTiles8 is Dot4RowsTiles8 for two row quads prepared into u0 and
// u1 (by Prep4 or Prep4X8) at once, reading the preparations alone:
// quad u0's results for tile g at out0[32g:32g+32], u1's in out1. Where n
// is odd, the last tile runs as a pair with itself: out0 and out1 must
// then hold 32·(n+1) floats. HasOct must hold.
func (k *Kernel) Dot8RowsTiles8(u0, u1, tiles []byte, n int, out0, out1 []float32) {
	pb := k.Prep4Bytes()
	u0, u1 = u0[:pb], u1[:pb]
	for g := 0; g < n; g += 2 {
		ta, tn := k.tilePair(tiles, n, g)
		k.t8.oct(u0, u1, ta, tn, out0[32*g:32*g+64], out1[32*g:32*g+64])
	}
}

// tilePair is tiles g and g+1 of the n in tiles, or tile g twice where it
// is the last (the pair kernels then run an odd last tile with itself).
func (k *Kernel) tilePair(tiles []byte, n, g int) (ta, tb []byte) {
	s := k.Tile8Bytes()
	ta = tiles[g*s : (g+1)*s]
	if g+1 < n {
		return ta, tiles[(g+1)*s : (g+2)*s]
	}
	return ta, ta
}

// Dot4RowsTiles8X8 is Dot4RowsTiles8 for four rows of the x8 group in
// group prepared by Prep4X8: the quad kernel (or the K types' pair and
// one-tile kernels), which read the preparation alone, never the group.
// Where n is odd, the last tile runs as a pair with itself: out must then
// hold 32·(n+1) floats.
func (k *Kernel) Dot4RowsTiles8X8(group, u, tiles []byte, n int, out []float32) {
	if k.t8.quad == nil {
		k.Dot4RowsTiles8(group, u, tiles, n, out)
		return
	}
	w := group[: 4*k.wrb : 4*k.wrb]
	u = u[:k.n/k.t8.qk*k.t8.prepBlock]
	for g := 0; g < n; g += 2 {
		ta, tn := k.tilePair(tiles, n, g)
		k.t8.quad(w, k.wrb, u, ta, tn, out[32*g:32*g+64])
	}
}

// Dot4RowsTile8 is Dot of four consecutive weight rows (WeightRowBytes
// apart in w, prepared into u by Prep4) against the eight tokens of tile:
// out[8·r+t] is row r's dot with token t, bit-identical to Dot on the
// token's row.
func (k *Kernel) Dot4RowsTile8(w, u, tile []byte, out *[32]float32) {
	nb := k.n / k.t8.qk
	if k.t8.prep != nil {
		u = u[:nb*k.t8.prepBlock]
	}
	k.t8.dot(w[:4*k.wrb:4*k.wrb], k.wrb, u, tile[:nb*k.t8.tileBlock], out)
}

// Dot4RowsTiles8 is Dot4RowsTile8 against the n consecutive tiles in
// tiles (Tile8Bytes each): tile g's results go to out[32g:32g+32].
func (k *Kernel) Dot4RowsTiles8(w, u, tiles []byte, n int, out []float32) {
	tb := k.Tile8Bytes()
	g := 0
	if k.t8.quad != nil {
		w = w[: 4*k.wrb : 4*k.wrb]
		nb := k.n / k.t8.qk
		if k.t8.prep != nil {
			u = u[:nb*k.t8.prepBlock]
		}
		for ; g+2 <= n; g += 2 {
			k.t8.quad(w, k.wrb, u, tiles[g*tb:(g+1)*tb], tiles[(g+1)*tb:(g+2)*tb], out[32*g:32*g+64])
		}
	}
	if k.t8.pair != nil {
		w = w[: 4*k.wrb : 4*k.wrb]
		nb := k.n / k.t8.qk
		if k.t8.prep != nil {
			u = u[:nb*k.t8.prepBlock]
		}
		for ; g+2 <= n; g += 2 {
			ta, tbb := tiles[g*tb:(g+1)*tb], tiles[(g+1)*tb:(g+2)*tb]
			k.t8.pair(w, k.wrb, u, 0, ta, tbb, out[32*g:32*g+64])
			k.t8.pair(w, k.wrb, u, 2, ta, tbb, out[32*g+16:32*g+64])
		}
	}
	for ; g < n; g++ {
		k.Dot4RowsTile8(w, u, tiles[g*tb:(g+1)*tb], (*[32]float32)(out[32*g:32*g+32]))
	}
}

// prep4Q4_0 is the bytes per block of four unpacked Q4_0 rows;
// prep4Q8_0 that of four biased Q8_0 rows and their scales as float32
// (kernelSet.bias4Q8_0).
const (
	prep4Q4_0 = 128
	prep4Q8_0 = 128 + 16
	// prep4Q4_0S: unpack4Q4_0S's bytes per block, its 128 first and the
	// rows' four float32 scales in a tail after all blocks.
	prep4Q4_0S = 128 + 16
)

// noTiles drops the set's eight-token tile kernels (and their row
// preparations), so every type takes the four-token path at this level.
func (ks *kernelSet) noTiles() {
	ks.dotR4x8Q4_0Q8_0, ks.dotR2x16Q4_0Q8_0, ks.dotR4x16Q4_0Q8_0, ks.unpack4Q4_0, ks.unpack4Q4_0S = nil, nil, nil, nil, nil
	ks.dotR4x8Q8_0Q8_0, ks.dotR2x16Q8_0Q8_0, ks.dotR4x16Q8_0Q8_0, ks.bias4Q8_0 = nil, nil, nil, nil
	ks.prep4x8Q4_0S, ks.prep4x16Q4_0S, ks.prep4x8Q8_0, ks.dotR8x16Q8_0Q8_0, ks.dotR8x16Q4_KQ8_K, ks.dotR8x16Q4_0Q8_0 = nil, nil, nil, nil, nil, nil
	ks.tile8Q8_0Abs, ks.dotR4x8Q8_0Q8_0Abs, ks.dotR2x16Q8_0Q8_0Abs, ks.dotR4x16Q8_0Q8_0Abs, ks.scan4Q8_0 = false, nil, nil, nil, nil
	ks.dotR4x8Q4_KQ8_K, ks.dotR2x16Q4_KQ8_K, ks.dotR4x16Q4_KQ8_K, ks.prep4Q4_K, ks.prep4x8Q4_K, ks.prep4x16Q4_K = nil, nil, nil, nil, nil, nil
	ks.dotR4x8Q6_KQ8_K, ks.dotR2x16Q6_KQ8_K, ks.dotR4x16Q6_KQ8_K, ks.prep4Q6_K, ks.prep4x8Q6_K, ks.prep4x16Q6_K = nil, nil, nil, nil, nil, nil
}

// tile8For is the level's eight-token tile kernel for t; its dot is nil
// where there is none.
func (ks *kernelSet) tile8For(t gguf.GGMLType) tile8Kernel {
	switch t {
	case gguf.TypeQ4_0:
		// The quad kernel's preparation: the unpacked blocks, or with the
		// rows' scales as float32 after them where the level has that form.
		prep, pb := ks.unpack4Q4_0, prep4Q4_0
		var prepX8 func([]byte, int, []byte)
		var oct func(u0, u1, ta, tb []byte, out0, out1 []float32)
		if ks.unpack4Q4_0S != nil {
			prep, pb, prepX8, oct = ks.unpack4Q4_0S, prep4Q4_0S, ks.prep4x8Q4_0S, ks.dotR8x16Q4_0Q8_0
		}
		return tile8Kernel{dot: ks.dotR4x8Q4_0Q8_0, pair: ks.dotR2x16Q4_0Q8_0, quad: ks.dotR4x16Q4_0Q8_0, oct: oct, prep: prep, prepX8: prepX8, pack: ks.pack8Q8_0,
			qk: qk, tileBlock: tile8Block, prepBlock: pb}
	case gguf.TypeQ8_0:
		if ks.tile8Q8_0Abs {
			// |x| beside x in the tile (tile8q8.go).
			return tile8Kernel{dot: ks.dotR4x8Q8_0Q8_0Abs, pair: ks.dotR2x16Q8_0Q8_0Abs, quad: ks.dotR4x16Q8_0Q8_0Abs, prep: ks.scan4Q8_0, pack: ks.pack8Q8_0Abs,
				qk: qk, tileBlock: tile8AbsBlock, prepBlock: 1, scan: true}
		}
		// The quad kernel's preparation where the level has one: the rows'
		// quants biased to unsigned and their scales as float32.
		pb := 0
		var oct func(u0, u1, ta, tb []byte, out0, out1 []float32)
		if ks.bias4Q8_0 != nil {
			pb, oct = prep4Q8_0, ks.dotR8x16Q8_0Q8_0
		}
		return tile8Kernel{dot: ks.dotR4x8Q8_0Q8_0, pair: ks.dotR2x16Q8_0Q8_0, quad: ks.dotR4x16Q8_0Q8_0, oct: oct, prep: ks.bias4Q8_0, prepX8: ks.prep4x8Q8_0, pack: ks.pack8Q8_0,
			qk: qk, tileBlock: tile8Block, prepBlock: pb}
	case gguf.TypeQ4_K:
		if ks.dotR4x8Q4_KQ8_K == nil {
			return tile8Kernel{}
		}
		return tile8Kernel{dot: ks.dotR4x8Q4_KQ8_K, pair: ks.dotR2x16Q4_KQ8_K, quad: ks.dotR4x16Q4_KQ8_K, oct: ks.dotR8x16Q4_KQ8_K, prep: ks.prep4Q4_K, prepX8: ks.prep4x8Q4_K, pack: packTile8Q8_K,
			qk: qkK, tileBlock: tile8KBlock, prepBlock: prep4Q4_KBlock}
	case gguf.TypeQ6_K:
		if ks.dotR4x8Q6_KQ8_K == nil {
			return tile8Kernel{}
		}
		return tile8Kernel{dot: ks.dotR4x8Q6_KQ8_K, pair: ks.dotR2x16Q6_KQ8_K, quad: ks.dotR4x16Q6_KQ8_K, prep: ks.prep4Q6_K, prepX8: ks.prep4x8Q6_K, pack: packTile8Q6_K,
			qk: qkK, tileBlock: tile8Q6KBlock, prepBlock: prep4Q6_KBlock}
	}
	return tile8Kernel{}
}

// tile8Facts reads token t's d_x and 8·Σq from a tile block.
func tile8Facts(e []byte, t int) (float32, int32) {
	return math.Float32frombits(binary.LittleEndian.Uint32(e[4*t:])), int32(binary.LittleEndian.Uint32(e[32+4*t:]))
}

// tile8Q reads token t's quant j (0..31) from a tile block.
func tile8Q(e []byte, t, j int) int32 {
	return int32(int8(e[tile8Quant+32*(j/4)+4*t+j%4]))
}

// bias4Q8_0Generic is bias4Q8_0AVX512 in Go, 144 bytes a block: each
// quant of four Q8_0 rows (wstride apart) plus 128 as an unsigned byte
// (XOR 0x80), row r at 32r, then the rows' d_w as float32 (the twin
// tests' reference).
func bias4Q8_0Generic(w []byte, wstride int, u []byte) {
	for b := 0; b < len(u)/prep4Q8_0; b++ {
		ub := u[b*prep4Q8_0 : (b+1)*prep4Q8_0]
		for r := 0; r < 4; r++ {
			wb := w[r*wstride+b*bytesQ80 : r*wstride+(b+1)*bytesQ80]
			for j, v := range wb[2:] {
				ub[32*r+j] = v ^ 0x80
			}
			binary.LittleEndian.PutUint32(ub[128+4*r:], math.Float32bits(F16ToF32(binary.LittleEndian.Uint16(wb))))
		}
	}
}

// unpack4Q4_0SGeneric is unpack4Q4_0S in Go: unpack4Q4_0Generic's nb
// blocks, then each block's four d_w as float32 (the twin tests').
func unpack4Q4_0SGeneric(w []byte, wstride int, u []byte) {
	nb := len(u) / prep4Q4_0S
	unpack4Q4_0Generic(w, wstride, u[:nb*prep4Q4_0])
	for b := 0; b < nb; b++ {
		for r := 0; r < 4; r++ {
			d := F16ToF32(binary.LittleEndian.Uint16(w[r*wstride+b*bytesQ4:]))
			binary.LittleEndian.PutUint32(u[nb*prep4Q4_0+16*b+4*r:], math.Float32bits(d))
		}
	}
}

// unpack4Q4_0Generic unpacks the nibbles of four Q4_0 rows (wstride
// apart) to bytes: per block, row r's 32 at 32·r in element order.
func unpack4Q4_0Generic(w []byte, wstride int, u []byte) {
	nb := len(u) / prep4Q4_0
	for r := 0; r < 4; r++ {
		for b := 0; b < nb; b++ {
			qs := w[r*wstride+b*bytesQ4+2 : r*wstride+(b+1)*bytesQ4]
			ub := u[b*prep4Q4_0+32*r : b*prep4Q4_0+32*r+32]
			for j := 0; j < 16; j++ {
				ub[j] = qs[j] & 0xf
				ub[j+16] = qs[j] >> 4
			}
		}
	}
}

// dotR4x8Q4_0Q8_0Generic is the Go twin of the four-row eight-token Q4_0
// kernel, working from the unpacked nibbles and the tile as the assembly
// does: unsigned nibbles against the quants, minus 8·Σq, then
// sum += sumi·(d_w·d_x).
func dotR4x8Q4_0Q8_0Generic(w []byte, wstride int, u, tile []byte, out *[32]float32) {
	nb := len(tile) / tile8Block
	for r := 0; r < 4; r++ {
		for t := 0; t < 8; t++ {
			var sum float32
			for b := 0; b < nb; b++ {
				dw := f16le(w[r*wstride+b*bytesQ4:])
				ub := u[b*prep4Q4_0+32*r : b*prep4Q4_0+32*r+32]
				e := tile[b*tile8Block : (b+1)*tile8Block]
				dx, s8 := tile8Facts(e, t)
				var sumi int32
				for j := 0; j < 32; j++ {
					sumi += int32(ub[j]) * tile8Q(e, t, j)
				}
				sumi -= s8
				sum += float32(float32(sumi) * (dw * dx))
			}
			out[8*r+t] = sum
		}
	}
}

// dotR4x8Q8_0Q8_0Generic is the Go twin of the four-row eight-token Q8_0
// kernel (u is unused): sum = fma(sumi, d_w·d_x, sum) per block.
func dotR4x8Q8_0Q8_0Generic(w []byte, wstride int, _, tile []byte, out *[32]float32) {
	dotR4x8Q8_0Tiles(w, wstride, tile, tile8Block, tile8Quants, out)
}

// tile8Quants reads token t's 32 quants from a tile block.
func tile8Quants(e []byte, t int, xq *[32]int32) {
	for j := range xq {
		xq[j] = tile8Q(e, t, j)
	}
}

// dotR4x8Q8_0Tiles is the Q8_0 tile twin over tiles of blk bytes a block
// whose token t's 32 quants quants reads (tile8Quants, or the tile8Abs
// form's).
func dotR4x8Q8_0Tiles(w []byte, wstride int, tile []byte, blk int, quants func(e []byte, t int, xq *[32]int32), out *[32]float32) {
	var xq [32]int32
	nb := len(tile) / blk
	for r := 0; r < 4; r++ {
		wr := w[r*wstride : r*wstride+nb*bytesQ80]
		for t := 0; t < 8; t++ {
			var sum float32
			for b := 0; b < nb; b++ {
				wb := wr[b*bytesQ80 : (b+1)*bytesQ80]
				e := tile[b*blk : (b+1)*blk]
				dx, _ := tile8Facts(e, t)
				quants(e, t, &xq)
				var sumi int32
				for j, x := range xq {
					sumi += int32(int8(wb[2+j])) * x
				}
				sum = fma32(float32(sumi), f16le(wb)*dx, sum)
			}
			out[8*r+t] = sum
		}
	}
}
