package graph

import (
	"fmt"

	"github.com/minfer/minfer/gguf"
)

// Builder appends nodes in execution order. SetLayer stamps every node made
// after it with the block it belongs to; the scheduler reads that stamp.
type Builder struct {
	g     *Graph
	layer int
	err   error
}

// NewBuilder starts a graph for params.
func NewBuilder(p Params) *Builder {
	return &Builder{g: &Graph{Params: p, Inputs: map[string]*Node{}}, layer: Unblocked}
}

// SetLayer stamps the following nodes with block il (Unblocked for none).
func (b *Builder) SetLayer(il int) { b.layer = il }

// Err is the first shape error met while building.
func (b *Builder) Err() error { return b.err }

// Finish returns the graph with its outputs, or the first build error.
func (b *Builder) Finish(outputs ...*Node) (*Graph, error) {
	if b.err != nil {
		return nil, b.err
	}
	b.g.Outputs = outputs
	return b.g, nil
}

func (b *Builder) fail(format string, a ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("graph: "+format, a...)
	}
}

func (b *Builder) add(n *Node) *Node {
	n.ID = len(b.g.Nodes)
	n.Layer = b.layer
	if _, err := n.Type.RowBytes(n.Elements()); err != nil {
		b.fail("node %q: %v", n.Name, err)
	}
	for _, d := range n.Shape {
		if d <= 0 {
			b.fail("node %q: shape %v has a non-positive dimension", n.Name, n.Shape)
		}
	}
	b.g.Nodes = append(b.g.Nodes, n)
	return n
}

func shape(dims ...int64) [4]int64 {
	s := [4]int64{1, 1, 1, 1}
	copy(s[:], dims)
	return s
}

// Input declares a host-filled input.
func (b *Builder) Input(name string, t gguf.GGMLType, dims ...int64) *Node {
	n := b.add(&Node{Op: OpInput, Type: t, Shape: shape(dims...), Name: name})
	b.g.Inputs[name] = n
	return n
}

// Weight references a registered model tensor. The node carries the layer of
// its block so the scheduler and the loader read the same plan.
func (b *Builder) Weight(name string, t gguf.GGMLType, dims []int64) *Node {
	return b.add(&Node{Op: OpWeight, Type: t, Shape: shape(dims...), Name: name, Weight: name})
}

// KV references a persistent cache region of rows×rowLen elements.
func (b *Builder) KV(name string, t gguf.GGMLType, rowLen, rows int64) *Node {
	return b.add(&Node{Op: OpKV, Type: t, Shape: shape(rowLen, rows), Name: name, Weight: name})
}

// View is a window of src starting at byte off with the given shape
// (reshape when off is 0 and the element count is equal).
func (b *Builder) View(src *Node, name string, off int64, dims ...int64) *Node {
	n := &Node{Op: OpView, Type: src.Type, Shape: shape(dims...), Src: [4]*Node{src}, Name: name, ViewOff: off}
	// A shape that is not a whole number of blocks is reported by add below
	// (with RowBytes's error); only the bounds are checked here.
	if nb, err := n.Type.RowBytes(n.Elements()); err == nil && off+nb > src.Bytes() {
		b.fail("view %q: bytes %d..%d outside %q (%d bytes)", name, off, off+nb, src.Name, src.Bytes())
	}
	return b.add(n)
}

// GetRows picks rows of table by the int32 ids, dequantized to F32.
func (b *Builder) GetRows(table, ids *Node, name string) *Node {
	if ids.Type != gguf.TypeI32 {
		b.fail("get_rows %q: ids are %s, want I32", name, ids.Type)
	}
	return b.add(&Node{Op: OpGetRows, Type: gguf.TypeF32, Shape: shape(table.Shape[0], ids.Elements()), Src: [4]*Node{table, ids}, Name: name})
}

// RMSNorm normalises each row of x.
func (b *Builder) RMSNorm(x *Node, eps float32, name string) *Node {
	return b.add(&Node{Op: OpRMSNorm, Type: gguf.TypeF32, Shape: x.Shape, Src: [4]*Node{x}, Name: name, Params: NormParams{Eps: eps}})
}

func (b *Builder) binary(op Op, x, y *Node, name string) *Node {
	// y is a row broadcast over x's rows, a row per row of x, or (Mul only)
	// one scalar per row of x.
	perRow := op == OpMul && y.Shape[0] == 1 && y.Rows() == x.Rows()
	if !perRow && (y.Shape[0] != x.Shape[0] || (y.Rows() != 1 && y.Rows() != x.Rows())) {
		b.fail("%s %q: %v and %v do not broadcast", op, name, x.Shape, y.Shape)
	}
	return b.add(&Node{Op: op, Type: gguf.TypeF32, Shape: x.Shape, Src: [4]*Node{x, y}, Name: name})
}

// Mul multiplies x by y, y broadcast over x's rows (or, when y has rows of
// one element, each row of x by its scalar).
func (b *Builder) Mul(x, y *Node, name string) *Node { return b.binary(OpMul, x, y, name) }

// Add adds y to x, y broadcast over x's rows.
func (b *Builder) Add(x, y *Node, name string) *Node { return b.binary(OpAdd, x, y, name) }

// MatMul computes x·wᵀ: w is [in, out] (out rows of in), x is [in, T];
// the result is [out, T].
func (b *Builder) MatMul(w, x *Node, name string) *Node {
	if w.Shape[0] != x.Shape[0] {
		b.fail("mat_mul %q: weight rows of %d, activations of %d", name, w.Shape[0], x.Shape[0])
	}
	return b.add(&Node{Op: OpMatMul, Type: gguf.TypeF32, Shape: shape(w.Rows(), x.Rows()), Src: [4]*Node{w, x}, Name: name})
}

// Rope rotates x, shaped [headDim, heads, T], by the int32 positions pos.
// freqs (nil or F32 [Dims/2]) divides each pair's frequency (llama 3 scaling).
func (b *Builder) Rope(x, pos, freqs *Node, p RopeParams, name string) *Node {
	if int64(p.Dims) > x.Shape[0] || p.Dims%2 != 0 {
		b.fail("rope %q: %d rotated dims for head size %d", name, p.Dims, x.Shape[0])
	}
	if pos.Elements() != x.Shape[2] {
		b.fail("rope %q: %d positions for %d tokens", name, pos.Elements(), x.Shape[2])
	}
	if p.Mode != RopeNormal && p.Mode != RopeNeoX {
		b.fail("rope %q: mode %s", name, p.Mode)
	}
	return b.add(&Node{Op: OpRope, Type: gguf.TypeF32, Shape: x.Shape, Src: [4]*Node{x, pos, freqs}, Name: name, Params: p})
}

// StoreKV writes the rows of x (F32, [rowLen, T]) into cache rows rows
// (int32 [T]), converting to the cache type. The result aliases the cache,
// so attention that reads it runs after the store.
func (b *Builder) StoreKV(cache, x, rows *Node, name string) *Node {
	if rows.Elements()*cache.Shape[0] != x.Elements() {
		b.fail("store_kv %q: %d rows for %v values", name, rows.Elements(), x.Shape)
	}
	return b.add(&Node{Op: OpStoreKV, Type: cache.Type, Shape: cache.Shape, Src: [4]*Node{cache, x, rows}, Name: name})
}

// Attention reads q [headDim, heads, T] against the first kvLen rows of the
// K and V caches ([headDim·kvHeads, ctx] each) under mask [kvLen, T]
// (0 or -inf), returning [headDim·heads, T].
func (b *Builder) Attention(q, k, v, mask *Node, p AttentionParams, name string) *Node {
	kvHeads, kvLen := p.KVHeads, p.KVLen
	headDim, heads := q.Shape[0], q.Shape[1]
	if kvHeads <= 0 || kvLen <= 0 {
		b.fail("attention %q: %d kv heads, kv length %d", name, kvHeads, kvLen)
		kvHeads = 1
	}
	if heads%int64(kvHeads) != 0 || k.Shape[0] != headDim*int64(kvHeads) || v.Shape[0] != k.Shape[0] {
		b.fail("attention %q: q %v, k %v, v %v with %d kv heads", name, q.Shape, k.Shape, v.Shape, kvHeads)
	}
	if int64(kvLen) > k.Shape[1] || mask.Shape[0] != int64(kvLen) || mask.Shape[1] != q.Shape[2] {
		b.fail("attention %q: kv length %d, cache %d rows, mask %v", name, kvLen, k.Shape[1], mask.Shape)
	}
	return b.add(&Node{Op: OpAttention, Type: gguf.TypeF32, Shape: shape(headDim*heads, q.Shape[2]), Src: [4]*Node{q, k, v, mask}, Name: name, Params: p})
}

// SwiGLU is silu(gate) * up.
func (b *Builder) SwiGLU(gate, up *Node, name string) *Node {
	if gate.Shape != up.Shape {
		b.fail("swiglu %q: %v and %v", name, gate.Shape, up.Shape)
	}
	return b.add(&Node{Op: OpSwiGLU, Type: gguf.TypeF32, Shape: gate.Shape, Src: [4]*Node{gate, up}, Name: name})
}
