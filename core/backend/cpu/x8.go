package cpu

import (
	"strings"

	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// Copied weights of the types with a repacked layout (quant.Interleaves8)
// are repacked at load, each group of consecutive rows into one
// sequential stream, for the one-token mat-vec: its group kernel then
// reads one stream instead of eight or sixteen strided ones, and decode
// reads the weights from memory faster (bench/results/
// 2026-12-02-s9-cpu-repack). The layout is the kernel's at load
// (quant.Kernel.Layout): Q4_0, Q4_K and Q6_K at the AVX512 level take
// col16, sixteen rows in the lanes of one register (quant/rows16c.go,
// rows16k.go; bench/results/2026-12-03-s13-cpu-col16, -q4kc16), the
// others x8, eight rows (quant/rows8i.go, rows8k.go). The weight keeps its layout (weight.layout) whatever level
// later runs it. Mapped weights keep the file's layout.
//
// Only the mat-muls read a repacked weight: bytesOf refuses it to every
// other op, so the repack is kept to the tensors that llama-style graphs
// read as mat-mul weights and nothing else (x8Names), whose rows come in
// whole groups of sixteen (so a view of either half, as the fused gate|up
// of a Phi-3 ffn_up, starts and ends on an x8 group; col16 asks for
// thirty-two, else the weight takes x8). A prompt step's mat-mul runs the
// tile kernels on the groups as they lie where the kernel prepares their
// row quads so (quant.Kernel.HasPrepGroup), or turns each chunk of rows
// back into the file layout in the worker's scratch (runGroups) and runs
// them on that, as on a mapped weight.

// x8Names are the suffixes of the tensor names that may be repacked.
var x8Names = []string{
	".attn_q.weight", ".attn_k.weight", ".attn_v.weight", ".attn_output.weight",
	".ffn_gate.weight", ".ffn_up.weight", ".ffn_down.weight",
}

// col16MaxThreads is the most worker threads for which a copied weight
// takes col16 where its kernel offers it (else x8). The col16 kernels
// spend fewer instructions a byte, which counts where each thread must
// stream its share of the weights fast: on the 2-vCPU Intel VM decode
// gained 2–4 % (Q4_K_M, Q4_0) and 10–15 % with another process busy
// beside it (bench/results/2026-12-03-s13-cpu-col16, -q4kc16, -cpu-final).
// With sixteen threads on the H200 host's 16-core Intel Xeon each thread
// needs a sixth of that, the kernels wait on memory either way, and col16
// read slower there: its Q4_K and Q6_K kernels took 12 and 18 % more time
// in a decode profile, the half-offloaded 8B decoded 25.5 and 31.4 tok/s
// against 33.9 and 33.7, Q4_0 prefill lost 4–7 % (bench/results/
// 2026-12-03-s13-call3, -call4; that host's CPU half is noisy: two x8
// builds read 25.7–32.5 tok/s there in -call5, so the profile is the firmer
// evidence). Between 4 and 16 threads not measured.
const col16MaxThreads = 4

// repackLayout is the layout a copied weight is repacked to for a backend
// of threads workers: the kernel's at this level (quant.Kernel.Layout) for
// a matrix of a type with one, rows a multiple of sixteen (col16:
// thirty-two and no more than col16MaxThreads threads, else x8), named
// as a mat-mul-only weight; quant.LayoutFile for the others.
func repackLayout(name string, t gguf.GGMLType, dims []int64, threads int) quant.Layout {
	if !quant.Interleaves8(t) || len(dims) != 2 || dims[1] <= 0 || dims[1]%16 != 0 {
		return quant.LayoutFile
	}
	k, err := quant.NewKernel(t, int(dims[0]))
	if err != nil {
		return quant.LayoutFile
	}
	lay := k.Layout()
	if lay == quant.LayoutCol16 && (dims[1]%32 != 0 || threads > col16MaxThreads) {
		// Halves of the weight would split a group of sixteen, or there
		// are threads enough to wait on memory anyway.
		lay = quant.LayoutFile
		if k.HasX8() {
			lay = quant.LayoutX8
		}
	}
	if lay == quant.LayoutFile {
		return lay
	}
	if name == "output.weight" {
		return lay
	}
	for _, s := range x8Names {
		if strings.HasPrefix(name, "blk.") && strings.HasSuffix(name, s) {
			return lay
		}
	}
	return quant.LayoutFile
}

// copyRepacked is copyOf with the copy repacked to lay (repackLayout's
// weights).
func (a *weightArena) copyRepacked(data []byte, t gguf.GGMLType, dims []int64, lay quant.Layout) []byte {
	k, err := quant.NewKernel(t, int(dims[0]))
	if err != nil {
		panic(err) // repackLayout made this kernel
	}
	g := k.GroupBytes(lay)
	return a.copyWith(data, func(dst, src []byte) {
		n := len(src) / g * g
		for o := 0; o < n; o += g {
			k.Interleave(lay, dst[o:o+g], src[o:o+g])
		}
		copy(dst[n:], src[n:])
	})
}

// groupView reports whether a view of len bytes at off into the repacked
// weight w starts on a group of its layout and ends on one or at w's last
// row.
func groupView(w weight, off, n int64) bool {
	rb, err := w.t.RowBytes(w.dims[0])
	if err != nil || rb <= 0 {
		return false
	}
	g := int64(w.layout.GroupRows()) * rb
	end := off + n
	return off%g == 0 && (end%g == 0 || end == int64(len(w.data)))
}

// groupSpan is how many rows of a repacked weight a prompt step's mat-mul
// turns back into the file layout at a time: the prompt grain.
const groupSpan = 16

// runGroups is run for a prompt step on a repacked weight: groupSpan rows
// at a time, their groups turned back into the file layout in the
// worker's scratch, and runRows on that.
func (t *matTask) runGroups(worker, lo, hi int) {
	wrb := t.k.WeightRowBytes()
	ws := &t.c.ws[worker]
	gr := t.lay.GroupRows()
	ge := len(t.w) / (gr * wrb) * gr
	for l := lo; l < hi; l += groupSpan {
		h := min(hi, l+groupSpan)
		a, e := l-l%gr, min(t.rows, (h+gr-1)/gr*gr)
		need := (e - a) * wrb
		if cap(ws.rows) < need {
			ws.rows = make([]byte, need)
		}
		rw := ws.rows[:need]
		for i := a; i < e; i += gr {
			if i+gr <= ge {
				t.k.Deinterleave(t.lay, rw[(i-a)*wrb:(i-a+gr)*wrb], t.w[i*wrb:(i+gr)*wrb])
			} else {
				copy(rw[(i-a)*wrb:], t.w[i*wrb:e*wrb])
			}
		}
		t.runRows(worker, rw, a, quant.LayoutFile, l, h)
	}
}

// X8Weights is how many registered weights are repacked (x8 or col16).
func (c *CPU) X8Weights() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, w := range c.weights {
		if w.layout != quant.LayoutFile {
			n++
		}
	}
	return n
}

// Col16Weights is how many registered weights are repacked to col16.
func (c *CPU) Col16Weights() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, w := range c.weights {
		if w.layout == quant.LayoutCol16 {
			n++
		}
	}
	return n
}
