package quant

import (
	"encoding/binary"

	"github.com/minfer/minfer/gguf"
)

// The eight-row interleaved layout ("x8"): a copy of a weight whose rows
// the decode mat-vec reads eight at a time can be repacked at load so that
// each group of eight consecutive rows is one sequential stream. In the
// file layout the eight-row kernel reads eight streams a row apart (2304
// bytes for a Q4_0 row of 4096), and from memory it reached ~70 % of the
// bandwidth the same kernel reaches on one stream (bench/results/
// 2026-12-02-s9-cpu-repack). A group keeps its size (8·WeightRowBytes), so
// a repacked weight has its file length, and rows past the last whole
// group stay in the file layout where they were.
//
// Q4_0 x8, per 32-column block of the group, 144 bytes: the eight rows'
// F16 scales d[0..7] (16 bytes), then the 16 quant bytes of rows 0, 4, 1,
// 5, 2, 6, 3, 7 in that order (the order the kernels' registers take them
// in: [r0|r4] [r1|r5] [r2|r6] [r3|r7]). The nibbles are the file's.

// Q8_0 x8, per 32-column block of the group, 272 bytes: the eight rows'
// F16 scales d[0..7] (16 bytes), then for each 8-byte chunk c (quants
// 8c..8c+7) the chunk of rows 0..7 (64 bytes): one 512-bit register of a
// chunk, each row in a 64-bit lane. The quants are the file's bytes.

// bytesQ80x8 is one Q8_0 x8 block.
const bytesQ80x8 = 8 * bytesQ80

// x8Order is the row of the group whose quants come i-th in a Q4_0 x8
// block.
var x8Order = [8]int{0, 4, 1, 5, 2, 6, 3, 7}

// x8Pos is x8Order inverted: the place of row r's quants in a block.
var x8Pos = [8]int{0, 2, 4, 6, 1, 3, 5, 7}

// bytesQ4x8 is one Q4_0 x8 block: eight scales, eight rows' quants.
const bytesQ4x8 = 8 * bytesQ4

// Interleaves8 reports whether weights of t have the x8 layout
// (Interleave8 repacks them; rows8k.go has the K types').
func Interleaves8(t gguf.GGMLType) bool {
	_, k := kx8(t)
	return k || t == gguf.TypeQ4_0 || t == gguf.TypeQ8_0
}

// Interleave8 writes the group of eight rows src (8·WeightRowBytes, file
// layout) into dst (the same length) in the x8 layout (Interleaves8's
// types).
func (k *Kernel) Interleave8(dst, src []byte) {
	wrb := k.wrb
	dst, src = dst[:8*wrb], src[:8*wrb]
	if bs, ok := kx8(k.t); ok {
		moveK8(src, dst, wrb/bs, bs, true)
		return
	}
	nb := k.n / qk
	if k.t == gguf.TypeQ8_0 {
		for b := 0; b < nb; b++ {
			o := dst[b*bytesQ80x8 : (b+1)*bytesQ80x8]
			for r := 0; r < 8; r++ {
				s := src[r*wrb+b*bytesQ80 : r*wrb+(b+1)*bytesQ80]
				o[2*r], o[2*r+1] = s[0], s[1]
				for c := 0; c < 4; c++ {
					copy(o[16+64*c+8*r:16+64*c+8*r+8], s[2+8*c:])
				}
			}
		}
		return
	}
	for b := 0; b < nb; b++ {
		o := dst[b*bytesQ4x8 : (b+1)*bytesQ4x8]
		for r := 0; r < 8; r++ {
			s := src[r*wrb+b*bytesQ4:]
			o[2*r], o[2*r+1] = s[0], s[1]
		}
		for i, r := range x8Order {
			copy(o[16+16*i:16+16*i+16], src[r*wrb+b*bytesQ4+2:])
		}
	}
}

// Deinterleave8 is Interleave8 undone: the group src (x8) as eight rows in
// the file layout in dst. (A prompt step runs it on every chunk of an x8
// weight's rows: word moves, no copy calls.)
func (k *Kernel) Deinterleave8(dst, src []byte) {
	switch bs, kt := kx8(k.t); {
	case kt:
		moveK8(dst[:8*k.wrb], src[:8*k.wrb], k.wrb/bs, bs, false)
	case k.deint8 != nil:
		k.deint8(dst[:8*k.wrb], k.wrb, src[:8*k.wrb])
	case k.t == gguf.TypeQ8_0:
		deinterleave8Q8_0Generic(dst, k.wrb, src)
	default:
		deinterleave8Q4_0Generic(dst, k.wrb, src)
	}
}

// deinterleave8Q8_0Generic is the Go twin of Deinterleave8's Q8_0 kernels.
func deinterleave8Q8_0Generic(dst []byte, wrb int, src []byte) {
	nb := wrb / bytesQ80
	dst, src = dst[:8*wrb], src[:8*wrb]
	le := binary.LittleEndian
	for r := 0; r < 8; r++ {
		d := dst[r*wrb : (r+1)*wrb]
		for b := 0; b < nb; b++ {
			s := src[b*bytesQ80x8 : (b+1)*bytesQ80x8 : (b+1)*bytesQ80x8]
			o := d[b*bytesQ80 : (b+1)*bytesQ80 : (b+1)*bytesQ80]
			le.PutUint16(o, le.Uint16(s[2*r:]))
			for c := 0; c < 4; c++ {
				le.PutUint64(o[2+8*c:], le.Uint64(s[16+64*c+8*r:]))
			}
		}
	}
}

// deinterleave8Q4_0Generic is the Go twin of Deinterleave8's kernels.
func deinterleave8Q4_0Generic(dst []byte, wrb int, src []byte) {
	nb := wrb / bytesQ4
	dst, src = dst[:8*wrb], src[:8*wrb]
	le := binary.LittleEndian
	for r := 0; r < 8; r++ {
		i := x8Pos[r]
		d := dst[r*wrb : (r+1)*wrb]
		for b := 0; b < nb; b++ {
			s := src[b*bytesQ4x8 : (b+1)*bytesQ4x8 : (b+1)*bytesQ4x8]
			o := d[b*bytesQ4 : (b+1)*bytesQ4 : (b+1)*bytesQ4]
			le.PutUint16(o, le.Uint16(s[2*r:]))
			le.PutUint64(o[2:], le.Uint64(s[16+16*i:]))
			le.PutUint64(o[10:], le.Uint64(s[24+16*i:]))
		}
	}
}

// Dot8RowsX8 is Dot of the eight rows of one x8 group w (8·WeightRowBytes)
// against one activation row x, tab its table from PrepareToken1 (nil
// when Token1TableBytes is 0): out[r] is row r's dot, bit-identical to
// Dot on the row in the file layout.
func (k *Kernel) Dot8RowsX8(w, x, tab []byte, out *[8]float32) {
	if _, ok := kx8(k.t); ok {
		k.dot8RowsX8K(w[:8*k.wrb:8*k.wrb], x[:k.xrb:k.xrb], out)
		return
	}
	nb := k.n / qk
	if k.rows8X8 == nil || tab == nil {
		if k.t == gguf.TypeQ8_0 {
			rows8X8Q8_0Generic(w[:8*k.wrb], x[:k.xrb], out)
		} else {
			rows8X8Q4_0Generic(w[:8*k.wrb], x[:k.xrb], out)
		}
		return
	}
	k.rows8X8(w[:8*k.wrb:8*k.wrb], x[:k.xrb:k.xrb], tab[:nb*token1Q8_0], out)
}

// DotRowX8 is Dot of row r (0..7) of the x8 group w against x.
func (k *Kernel) DotRowX8(w []byte, r int, x []byte) float32 {
	if _, ok := kx8(k.t); ok {
		return k.dotRowX8K(w[:8*k.wrb], r, x[:k.xrb])
	}
	nb := k.n / qk
	if k.t == gguf.TypeQ8_0 {
		w, x = w[:nb*bytesQ80x8], x[:nb*bytesQ80]
		var sum float32
		for b := 0; b < nb; b++ {
			wb := w[b*bytesQ80x8 : (b+1)*bytesQ80x8]
			xb := x[b*bytesQ80 : (b+1)*bytesQ80]
			sum = fma32(float32(q8_0x8Sumi(wb, xb, r)), f16le(wb[2*r:])*f16le(xb), sum)
		}
		return sum
	}
	w, x = w[:nb*bytesQ4x8], x[:nb*bytesQ80]
	var sum float32
	for b := 0; b < nb; b++ {
		sum += float32(float32(q4_0x8Sumi(w[b*bytesQ4x8:(b+1)*bytesQ4x8], x[b*bytesQ80:(b+1)*bytesQ80], r)) * (f16le(w[b*bytesQ4x8+2*r:]) * f16le(x[b*bytesQ80:])))
	}
	return sum
}

// q4_0x8Sumi is row r's integer block sum of dotQ4_0Q8_0Generic in the x8
// block wb against the Q8_0 block xb.
func q4_0x8Sumi(wb, xb []byte, r int) int32 {
	i := x8Pos[r]
	return q4_0Sumi(wb[16+16*i:32+16*i:32+16*i], xb)
}

// rows8X8Q4_0Generic is the Go twin of the x8 kernels: each row the
// one-row generic sequence (sum += sumi·(d_w·d_x), product rounded).
func rows8X8Q4_0Generic(w, x []byte, out *[8]float32) {
	nb := len(w) / bytesQ4x8
	x = x[:nb*bytesQ80]
	*out = [8]float32{}
	for b := 0; b < nb; b++ {
		wb := w[b*bytesQ4x8 : (b+1)*bytesQ4x8 : (b+1)*bytesQ4x8]
		xb := x[b*bytesQ80 : (b+1)*bytesQ80 : (b+1)*bytesQ80]
		dx := f16le(xb)
		for r := range out {
			out[r] += float32(float32(q4_0x8Sumi(wb, xb, r)) * (f16le(wb[2*r:]) * dx))
		}
	}
}

// HasX8 reports whether this kernel runs x8 groups with a kernel of its
// level (not the generic twin): the condition for repacking a weight.
func (k *Kernel) HasX8() bool { return k.rows8X8 != nil || k.rows4x4 != nil }

// q8_0x8Sumi is row r's integer block sum of dotQ8_0Q8_0Generic in the x8
// block wb against the Q8_0 block xb.
func q8_0x8Sumi(wb, xb []byte, r int) int32 {
	var sumi int32
	for c := 0; c < 4; c++ {
		qw := wb[16+64*c+8*r : 24+64*c+8*r : 24+64*c+8*r]
		qx := xb[2+8*c : 10+8*c : 10+8*c]
		for j := range qw {
			sumi += int32(int8(qw[j])) * int32(int8(qx[j]))
		}
	}
	return sumi
}

// rows8X8Q8_0Generic is the Go twin of the Q8_0 x8 kernels: each row the
// one-row generic sequence (sum = fma(sumi, d_w·d_x, sum)).
func rows8X8Q8_0Generic(w, x []byte, out *[8]float32) {
	nb := len(w) / bytesQ80x8
	x = x[:nb*bytesQ80]
	*out = [8]float32{}
	for b := 0; b < nb; b++ {
		wb := w[b*bytesQ80x8 : (b+1)*bytesQ80x8 : (b+1)*bytesQ80x8]
		xb := x[b*bytesQ80 : (b+1)*bytesQ80 : (b+1)*bytesQ80]
		dx := f16le(xb)
		for r := range out {
			out[r] = fma32(float32(q8_0x8Sumi(wb, xb, r)), f16le(wb[2*r:])*dx, out[r])
		}
	}
}
