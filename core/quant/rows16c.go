package quant

import (
	"encoding/binary"
	"math"

	"github.com/minfer/minfer/gguf"
)

// Layout is how the rows of a weight repacked at load lie: the file's, the
// eight-row x8 layout (rows8i.go, rows8k.go), or the sixteen-row column
// layout col16 (below). A repacked weight keeps its layout whatever level
// the kernels later run at: the Kernel methods that take a Layout run
// every layout at every level (the generic twins where the level has no
// kernel for it).
type Layout uint8

const (
	// LayoutFile is the GGUF layout: rows one after another.
	LayoutFile Layout = iota
	// LayoutX8 is the x8 layout, groups of eight rows.
	LayoutX8
	// LayoutCol16 is the col16 layout, groups of sixteen rows (Q4_0).
	LayoutCol16
)

// GroupRows is the rows of one group of the layout, 0 for LayoutFile.
func (l Layout) GroupRows() int {
	switch l {
	case LayoutX8:
		return 8
	case LayoutCol16:
		return 16
	}
	return 0
}

func (l Layout) String() string {
	switch l {
	case LayoutX8:
		return "x8"
	case LayoutCol16:
		return "col16"
	}
	return "file"
}

// The sixteen-row column layout ("col16") of Q4_0: each group of sixteen
// consecutive rows is one stream, per 32-column block 288 bytes: the
// sixteen rows' F16 scales d[0..15] (32 bytes), then four 64-byte chunks,
// chunk c holding quant bytes 4c..4c+3 of row 0, then of row 1, …, of row
// 15 (row r's at 32 + 64c + 4r). The nibbles are the file's. A chunk is one
// 512-bit register with a row in each 32-bit lane; it meets the token's
// four matching quants of each nibble half (elements 4c..4c+3 and
// 16+4c..16+4c+3) broadcast to every lane, so each lane ends the block
// with its row's whole integer sum and no horizontal reduction is left:
// the decode mat-vec takes ~34 instructions for sixteen rows and a block,
// where the x8 kernel takes ~72 (bench/results/2026-12-02-s12-cpu-col16).
// The layout is used where the level has its decode kernel (AVX-512 VNNI;
// Kernel.Layout); the AVX2 level and arm64 keep x8. (Q8_0 in the same
// layout, eight chunks a block, decoded and prefilled no faster than x8:
// bench/results/2026-12-03-s13-cpu-col16.)

// bytesQ4c16 is one Q4_0 col16 block: sixteen scales, sixteen rows' quants.
const bytesQ4c16 = 16 * bytesQ4

// Layout is the layout this kernel's weights are repacked to at its level:
// col16 for Q4_0, Q4_K and Q6_K where the level has their col16 decode
// kernel (rows16k.go has the K types' layout), x8 where it has an x8
// kernel (HasX8), else the file's.
func (k *Kernel) Layout() Layout {
	switch {
	case k.rows16 != nil:
		return LayoutCol16
	case k.HasX8():
		return LayoutX8
	}
	return LayoutFile
}

// Has reports whether weights of the kernel's type can lie in layout l
// (whether or not the level has a kernel for it).
func (k *Kernel) Has(l Layout) bool {
	switch l {
	case LayoutFile:
		return true
	case LayoutX8:
		return Interleaves8(k.t)
	case LayoutCol16:
		return k.t == gguf.TypeQ4_0 || c16KFor(k.t) != nil
	}
	return false
}

// GroupBytes is the bytes of one group of layout l (GroupRows rows).
func (k *Kernel) GroupBytes(l Layout) int { return l.GroupRows() * k.wrb }

// Interleave writes the group of l.GroupRows() rows src (file layout) into
// dst (the same length) in layout l (Has(l), l not LayoutFile).
func (k *Kernel) Interleave(l Layout, dst, src []byte) {
	kl := c16KFor(k.t)
	switch {
	case l != LayoutCol16:
		k.Interleave8(dst, src)
	case kl != nil:
		kl.move(src, dst, k.wrb/kl.bs, true)
	default:
		interleave16Q4_0(dst[:16*k.wrb], k.wrb, src[:16*k.wrb])
	}
}

// Deinterleave is Interleave undone: the group src (layout l) as rows in
// the file layout in dst. (A prompt step that cannot run on the groups as
// they lie runs it on every group: vector moves where the level has
// them.)
func (k *Kernel) Deinterleave(l Layout, dst, src []byte) {
	kl := c16KFor(k.t)
	switch {
	case l != LayoutCol16:
		k.Deinterleave8(dst, src)
	case k.deint16 != nil:
		k.deint16(dst[:16*k.wrb], k.wrb, src[:16*k.wrb])
	case kl != nil:
		kl.move(dst, src, k.wrb/kl.bs, false)
	default:
		deinterleave16Q4_0Generic(dst[:16*k.wrb], k.wrb, src[:16*k.wrb])
	}
}

// DotGroup is Dot of every row of one group w (layout l) against one
// activation row x, tab its token table (nil when Token1TableBytes is 0):
// out[r] (out holds l.GroupRows()) is row r's dot, bit-identical to Dot on
// the row in the file layout.
func (k *Kernel) DotGroup(l Layout, w, x, tab []byte, out []float32) {
	if l != LayoutCol16 {
		k.Dot8RowsX8(w, x, tab, (*[8]float32)(out[:8]))
		return
	}
	o := (*[16]float32)(out[:16])
	w, x = w[:16*k.wrb:16*k.wrb], x[:k.xrb:k.xrb]
	kl := c16KFor(k.t)
	switch {
	case kl != nil && k.rows16 == nil:
		kl.rows16(w, x, o)
	case kl != nil:
		k.rows16(w, x, nil, o) // no token table
	case k.rows16 == nil || tab == nil:
		rows16C16Q4_0Generic(w, x, o)
	default:
		k.rows16(w, x, tab[:k.n/qk*token1Q8_0], o)
	}
}

// groups4MinBytes is the smallest group (bytes; col16 or x8) that
// DotGroups4 reads four at a time. On the Zen 5 VM of session 18, from memory on two
// threads (BenchmarkZGroups4, bench/results/2026-12-06-s18-cpu), the four-group
// Q4_0 kernel read ffn_down's shape (2048 rows of 5632: 50.7 KB groups) at
// 49.3 GB/s against 37.9 one group at a time, but the gate's (5632 of
// 2048: 18.4 KB groups) at 49.6 against 52.4: a group that fits the L1
// with the token keeps it there by itself.
const groups4MinBytes = 32 << 10

// HasGroups4 reports whether DotGroups4 runs four groups of layout l in
// one kernel call (else it runs them one by one, as DotGroup): Q4_0 col16
// groups (AVX512 with GFNI) and Q8_0 x8 groups (AVX512) of
// groups4MinBytes or more. (Q8_0 x8 from memory, BenchmarkZGroups4Q8:
// ffn_down's shape, 47.9 KB groups, 42.4 GB/s against 38.1 one group at a
// time; the gate's, 17.4 KB groups, 38.4 against 48.1. A four-group Q4_K
// col16 kernel read both shapes slower: tried-q4k-groups4.diff.)
func (k *Kernel) HasGroups4(l Layout) bool {
	return l == LayoutCol16 && k.rows16x4 != nil || l == LayoutX8 && k.rows8x4 != nil
}

// DotGroups4 is DotGroup on the four consecutive groups w (layout l, 4 ×
// GroupRows rows), out (4 × GroupRows) their rows' dots in order: the
// same bits. Where the kernel has a four-group kernel (HasGroups4) it
// reads the groups block by block, all four against the token's block
// while it is in L1: one Q4_0 col16 group of ffn_down's
// 5632-column rows (50.7 KB) alone streams more than the L1 holds between
// two reads of a token line, and such matrices streamed ~20 % slower from
// memory than those of short rows one group at a time
// (bench/results/2026-12-06-s18-cpu).
func (k *Kernel) DotGroups4(l Layout, w, x, tab []byte, out []float32) {
	gr := l.GroupRows()
	gb := gr * k.wrb
	if k.HasGroups4(l) && tab != nil {
		if l == LayoutX8 {
			k.rows8x4(w[:4*gb:4*gb], gb, x[:k.xrb:k.xrb], tab[:k.n/qk*token1Q8_0], (*[32]float32)(out[:32]))
			return
		}
		k.rows16x4(w[:4*gb:4*gb], gb, x[:k.xrb:k.xrb], tab[:k.n/qk*token1Q8_0], (*[64]float32)(out[:64]))
		return
	}
	for g := 0; g < 4; g++ {
		k.DotGroup(l, w[g*gb:(g+1)*gb], x, tab, out[g*gr:(g+1)*gr])
	}
}

// DotGroupRow is Dot of row r of the group w (layout l) against x.
func (k *Kernel) DotGroupRow(l Layout, w []byte, r int, x []byte) float32 {
	if l != LayoutCol16 {
		return k.DotRowX8(w, r, x)
	}
	if kl := c16KFor(k.t); kl != nil {
		return kl.dotRow(w[:16*k.wrb], r, x[:k.xrb])
	}
	nb := k.n / qk
	w, x = w[:nb*bytesQ4c16], x[:nb*bytesQ80]
	var sum float32
	for b := 0; b < nb; b++ {
		wb := w[b*bytesQ4c16 : (b+1)*bytesQ4c16 : (b+1)*bytesQ4c16]
		xb := x[b*bytesQ80 : (b+1)*bytesQ80 : (b+1)*bytesQ80]
		sum += float32(float32(q4_0c16Sumi(wb, xb, r)) * (f16le(wb[2*r:]) * f16le(xb)))
	}
	return sum
}

// HasPrepGroup reports whether the tile kernels run on groups of layout l
// as they lie (PrepGroup, then Dot4RowsTiles8X8 on the group).
func (k *Kernel) HasPrepGroup(l Layout) bool {
	if l == LayoutCol16 {
		return k.prep16 != nil
	}
	return k.HasPrep4X8()
}

// PrepGroup is Prep4 for the four rows 4q..4q+3 of the group (layout l)
// as it lies; HasPrepGroup(l) must hold.
func (k *Kernel) PrepGroup(l Layout, group []byte, q int, u []byte) {
	if l == LayoutCol16 {
		k.prep16(group[:16*k.wrb:16*k.wrb], q, u[:k.Prep4Bytes()])
		return
	}
	k.Prep4X8(group, q, u)
}

// interleave16Q4_0 writes the sixteen Q4_0 rows of src (wrb apart) into
// dst in the col16 layout.
func interleave16Q4_0(dst []byte, wrb int, src []byte) {
	nb := wrb / bytesQ4
	le := binary.LittleEndian
	for b := 0; b < nb; b++ {
		o := dst[b*bytesQ4c16 : (b+1)*bytesQ4c16 : (b+1)*bytesQ4c16]
		for r := 0; r < 16; r++ {
			s := src[r*wrb+b*bytesQ4 : r*wrb+(b+1)*bytesQ4 : r*wrb+(b+1)*bytesQ4]
			le.PutUint16(o[2*r:], le.Uint16(s))
			for c := 0; c < 4; c++ {
				le.PutUint32(o[32+64*c+4*r:], le.Uint32(s[2+4*c:]))
			}
		}
	}
}

// deinterleave16Q4_0Generic is interleave16Q4_0 undone (the Go twin of
// deinterleave16Q4_0AVX512).
func deinterleave16Q4_0Generic(dst []byte, wrb int, src []byte) {
	nb := wrb / bytesQ4
	le := binary.LittleEndian
	for b := 0; b < nb; b++ {
		s := src[b*bytesQ4c16 : (b+1)*bytesQ4c16 : (b+1)*bytesQ4c16]
		for r := 0; r < 16; r++ {
			o := dst[r*wrb+b*bytesQ4 : r*wrb+(b+1)*bytesQ4 : r*wrb+(b+1)*bytesQ4]
			le.PutUint16(o, le.Uint16(s[2*r:]))
			for c := 0; c < 4; c++ {
				le.PutUint32(o[2+4*c:], le.Uint32(s[32+64*c+4*r:]))
			}
		}
	}
}

// q4_0c16Sumi is row r's integer block sum of dotQ4_0Q8_0Generic in the
// col16 block wb against the Q8_0 block xb.
func q4_0c16Sumi(wb, xb []byte, r int) int32 {
	var qs [16]byte
	for c := 0; c < 4; c++ {
		copy(qs[4*c:4*c+4], wb[32+64*c+4*r:])
	}
	return q4_0Sumi(qs[:], xb)
}

// rows16C16Q4_0Generic is the Go twin of the col16 kernel: each row the
// one-row generic sequence (sum += sumi·(d_w·d_x), product rounded).
func rows16C16Q4_0Generic(w, x []byte, out *[16]float32) {
	nb := len(w) / bytesQ4c16
	x = x[:nb*bytesQ80]
	*out = [16]float32{}
	for b := 0; b < nb; b++ {
		wb := w[b*bytesQ4c16 : (b+1)*bytesQ4c16 : (b+1)*bytesQ4c16]
		xb := x[b*bytesQ80 : (b+1)*bytesQ80 : (b+1)*bytesQ80]
		dx := f16le(xb)
		for r := range out {
			out[r] += float32(float32(q4_0c16Sumi(wb, xb, r)) * (f16le(wb[2*r:]) * dx))
		}
	}
}

// prep4x16Q4_0SGeneric is unpack4Q4_0S's preparation (prep4Q4_0S bytes a
// block: row r's 32 nibbles as bytes at 32r, element order; then a tail of
// the four d_w as float32 a block) of rows 4q..4q+3 of a col16 group as
// it lies.
func prep4x16Q4_0SGeneric(group []byte, q int, u []byte) {
	nb := len(u) / prep4Q4_0S
	for b := 0; b < nb; b++ {
		g := group[b*bytesQ4c16 : (b+1)*bytesQ4c16 : (b+1)*bytesQ4c16]
		ub := u[b*prep4Q4_0 : (b+1)*prep4Q4_0 : (b+1)*prep4Q4_0]
		for r := 0; r < 4; r++ {
			row := 4*q + r
			for c := 0; c < 4; c++ {
				for j := 0; j < 4; j++ {
					v := g[32+64*c+4*row+j]
					ub[32*r+4*c+j] = v & 0xf
					ub[32*r+16+4*c+j] = v >> 4
				}
			}
			d := f16le(g[2*row:])
			binary.LittleEndian.PutUint32(u[nb*prep4Q4_0+16*b+4*r:], math.Float32bits(d))
		}
	}
}
