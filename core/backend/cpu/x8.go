package cpu

import (
	"strings"

	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// Copied weights of the types with an x8 layout (quant.Interleaves8) are
// repacked at load, each group of eight consecutive rows into one
// sequential stream (quant/rows8i.go), for the one-token mat-vec: its
// eight-row kernel then reads one stream instead of eight strided ones,
// and decode reads the weights from memory faster (bench/results/
// 2026-12-02-s9-cpu-repack). Mapped weights keep the file's layout.
//
// Only the mat-muls read an x8 weight: bytesOf refuses it to every other
// op, so the repack is kept to the tensors that llama-style graphs read
// as mat-mul weights and nothing else (x8Names), whose rows come in whole
// groups of sixteen (so a view of either half, as the fused gate|up of a
// Phi-3 ffn_up, starts and ends on a group). A prompt step's mat-mul turns
// each chunk of rows back into the file layout in the worker's scratch
// (runX8) and runs the tile kernels on that, as on a mapped weight.

// x8Names are the suffixes of the tensor names that may be repacked.
var x8Names = []string{
	".attn_q.weight", ".attn_k.weight", ".attn_v.weight", ".attn_output.weight",
	".ffn_gate.weight", ".ffn_up.weight", ".ffn_down.weight",
}

// repacksX8 reports whether a copied weight is repacked to x8: a matrix of
// a type with an x8 layout, whose kernel at this level has an x8 kernel,
// rows a multiple of sixteen, named as a mat-mul-only weight.
func repacksX8(name string, t gguf.GGMLType, dims []int64) bool {
	if !quant.Interleaves8(t) || len(dims) != 2 || dims[1] <= 0 || dims[1]%16 != 0 {
		return false
	}
	k, err := quant.NewKernel(t, int(dims[0]))
	if err != nil || !k.HasX8() {
		return false
	}
	if name == "output.weight" {
		return true
	}
	for _, s := range x8Names {
		if strings.HasPrefix(name, "blk.") && strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// copyX8 is copyOf with the copy repacked to x8 (repacksX8's weights).
func (a *weightArena) copyX8(data []byte, t gguf.GGMLType, dims []int64) []byte {
	k, err := quant.NewKernel(t, int(dims[0]))
	if err != nil {
		panic(err) // repacksX8 made this kernel
	}
	g := 8 * k.WeightRowBytes()
	return a.copyWith(data, func(dst, src []byte) {
		n := len(src) / g * g
		for o := 0; o < n; o += g {
			k.Interleave8(dst[o:o+g], src[o:o+g])
		}
		copy(dst[n:], src[n:])
	})
}

// x8View reports whether a view of len bytes at off into the x8 weight w
// starts on a group of eight rows and ends on one or at w's last row.
func x8View(w weight, off, n int64) bool {
	rb, err := w.t.RowBytes(w.dims[0])
	if err != nil || rb <= 0 {
		return false
	}
	g := 8 * rb
	end := off + n
	return off%g == 0 && (end%g == 0 || end == int64(len(w.data)))
}

// x8Span is how many rows of an x8 weight a prompt step's mat-mul turns
// back into the file layout at a time: the prompt grain.
const x8Span = 16

// runX8 is run for a prompt step on an x8 weight: x8Span rows at a time,
// their groups turned back into the file layout in the worker's scratch,
// and runRows on that.
func (t *matTask) runX8(worker, lo, hi int) {
	wrb := t.k.WeightRowBytes()
	ws := &t.c.ws[worker]
	g8 := len(t.w) / (8 * wrb) * 8
	for l := lo; l < hi; l += x8Span {
		h := min(hi, l+x8Span)
		a, e := l&^7, min(t.rows, (h+7)&^7)
		need := (e - a) * wrb
		if cap(ws.rows) < need {
			ws.rows = make([]byte, need)
		}
		rw := ws.rows[:need]
		for i := a; i < e; i += 8 {
			if i+8 <= g8 {
				t.k.Deinterleave8(rw[(i-a)*wrb:(i-a+8)*wrb], t.w[i*wrb:(i+8)*wrb])
			} else {
				copy(rw[(i-a)*wrb:], t.w[i*wrb:e*wrb])
			}
		}
		t.runRows(worker, rw, a, false, l, h)
	}
}

// X8Weights is how many registered weights are repacked to x8.
func (c *CPU) X8Weights() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, w := range c.weights {
		if w.x8 {
			n++
		}
	}
	return n
}
