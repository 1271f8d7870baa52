package model

import (
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/gguf"
)

// Device-only fused forms (docs/memory-policy.md, E5): for a block the
// plan puts on the device, the loader registers one concatenated copy of
// the Q, K and V rows (blk.N.attn_qkv.weight) and of the gate and up rows
// (blk.N.ffn_gu.weight) instead of the separate tensors, and the builder
// reads them: a decode step does Q, K and V in one mat-vec (and gate and up
// in another), then views split the output; a prompt step reads the parts
// as row views of the fused tensor, in place. CPU blocks keep the separate
// weights the file has.
//
// The three readers agree through this one function: the loader registers
// exactly the fusions Fusions lists for a device block, BlockOf reads their
// names, and the builder asks the same question with the same answer.
const (
	tFusedQKV = "attn_qkv.weight" // the name Phi-3 files use for their own fused QKV
	tFusedGU  = "ffn_gu.weight"
)

// Fusion is one fused device tensor: the parts' rows, concatenated in
// order, under Name with the parts' type and row length.
type Fusion struct {
	Name  string
	Parts []string
	Type  gguf.GGMLType
	// Dims is [row length, total rows].
	Dims []int64
}

// Bytes is the fused tensor's size (the parts' sizes added).
func (f Fusion) Bytes() (int64, error) {
	return f.Type.RowBytes(f.Dims[0] * f.Dims[1])
}

// Fuser is an architecture that can read fused device forms.
type Fuser interface {
	// Fusions lists the fused forms block il can use: only where every
	// part exists, all share one type and one row length, the rows are
	// whole blocks of that type, and the file has no tensor of the fused
	// name already. tensors looks a file tensor up.
	Fusions(h HParams, tensors func(string) (*gguf.TensorInfo, bool), il int) []Fusion
}

// FusionsOf is arch's fusions for block il, none when arch has none.
func FusionsOf(arch Arch, h HParams, tensors func(string) (*gguf.TensorInfo, bool), il int) []Fusion {
	f, ok := arch.(Fuser)
	if !ok {
		return nil
	}
	return f.Fusions(h, tensors, il)
}

func (a family) Fusions(h HParams, tensors func(string) (*gguf.TensorInfo, bool), il int) []Fusion {
	var out []Fusion
	if !a.fusedQKV {
		if f, ok := fuse(tensors, il, tFusedQKV, tAttnQ, tAttnK, tAttnV); ok {
			out = append(out, f)
		}
	}
	if !a.usesMoE(h) && a.ffn != ffnFusedSiLU {
		if f, ok := fuse(tensors, il, tFusedGU, tFFNGate, tFFNUp); ok {
			out = append(out, f)
		}
	}
	return out
}

// fuse checks block il's parts and describes their fusion under name.
func fuse(tensors func(string) (*gguf.TensorInfo, bool), il int, name string, parts ...string) (Fusion, bool) {
	if _, clash := tensors(blk(il, name)); clash {
		return Fusion{}, false
	}
	f := Fusion{Name: blk(il, name)}
	var rowLen, rows int64
	for i, p := range parts {
		ti, ok := tensors(blk(il, p))
		if !ok || len(ti.Dims) != 2 {
			return Fusion{}, false
		}
		if i == 0 {
			f.Type, rowLen = ti.Type, ti.Dims[0]
			if bs := int64(ti.Type.BlockSize()); bs <= 0 || rowLen%bs != 0 {
				return Fusion{}, false
			}
		}
		if ti.Type != f.Type || ti.Dims[0] != rowLen {
			return Fusion{}, false
		}
		f.Parts = append(f.Parts, ti.Name)
		rows += ti.Dims[1]
	}
	f.Dims = []int64{rowLen, rows}
	if _, err := f.Bytes(); err != nil {
		return Fusion{}, false
	}
	return f, true
}

// fusion returns block il's fused tensor of the given kind when the
// builder was told to use the device forms and the plan puts the block on
// the device (il < GPULayers, as offload.Plan.OnDevice says).
func (a family) fusion(b *Builder, il int, kind string) (Fusion, bool) {
	if !b.DeviceFusion || il >= b.P.GPULayers {
		return Fusion{}, false
	}
	for _, f := range a.Fusions(b.H, b.Tensors, il) {
		if f.Name == blk(il, kind) {
			return f, true
		}
	}
	return Fusion{}, false
}

// fusedWeight is the graph's node for a fused device tensor.
func (b *Builder) fusedWeight(f Fusion) *graph.Node {
	return b.Builder.Weight(f.Name, f.Type, f.Dims)
}
