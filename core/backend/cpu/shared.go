package cpu

import (
	"fmt"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/internal/alloc"
)

// One-token mat-muls that read the same activations (a decode step's Q, K
// and V; gate and up) run as one pool call over their rows together: the
// activations are quantized once, and the pool's hand-off and the wait
// for the slower thread at the end are paid once instead of per weight.
// Each row is computed by the same kernel call as when the mat-muls run
// one by one, so the results are bit-identical.
//
// The weights may differ in type as long as their activations are
// quantized to one vec-dot type: a Q4_K_M file's V is Q6_K in about half
// of the blocks while Q and K are Q4_K (both read Q8_K activations), and
// those blocks ran V as a second pool call with the activations quantized
// again. Each weight keeps its own kernel. The token table
// (quant.Kernel.PrepareToken1) is a function of the quantized row alone,
// so one serves every kernel that takes it.

// maxShared is how many mat-muls one shared call takes.
const maxShared = 4

// matSeg is one weight of a shared call: rows base..base+rows-1 of the
// call are its rows 0..rows-1.
type matSeg struct {
	w          []byte
	out        []float32
	base, rows int
	lay        quant.Layout // w's layout (x8.go)
	k          quant.Kernel // w's kernel
	tab        []byte       // the token table when k takes one, else nil
}

// sharedRun is how many of the nodes, from the first, form a shared call:
// one-token quantized mat-muls of one row length and one activation type
// (quant.VecDotType) reading the same input node, whose outputs overlap
// neither the input nor one another. 1 when the first node has no
// partner.
func sharedRun(nodes []*graph.Node) int {
	n0 := nodes[0]
	if n0.Op != graph.OpMatMul || n0.Src[1] == nil || n0.Src[1].Rows() != 1 {
		return 1
	}
	w0 := n0.Src[0]
	if f16F32(w0.Type, int(w0.Shape[0])) {
		return 1
	}
	vt := quant.VecDotType(w0.Type)
	k := 1
	for k < len(nodes) && k < maxShared {
		n := nodes[k]
		if n.Op != graph.OpMatMul || n.Src[1] != n0.Src[1] || n.Src[0].Shape[0] != w0.Shape[0] {
			break
		}
		if t := n.Src[0].Type; t != w0.Type && quant.VecDotType(t) != vt {
			break
		}
		if overlaps(n.Buf, n0.Src[1].Buf) {
			break
		}
		clash := false
		for _, m := range nodes[:k] {
			clash = clash || overlaps(n.Buf, m.Buf)
		}
		if clash {
			break
		}
		k++
	}
	if k > 1 && overlaps(n0.Buf, n0.Src[1].Buf) {
		return 1
	}
	return k
}

// overlaps reports whether two buffer windows share a byte.
func overlaps(a, b alloc.BufRef) bool {
	return a.Backend == b.Backend && a.ID == b.ID && a.Off < b.Off+b.Len && b.Off < a.Off+a.Len
}

// matMulShared runs the one-token mat-muls of nodes (sharedRun's) in one
// pool call.
func (c *CPU) matMulShared(nodes []*graph.Node) error {
	n0 := nodes[0]
	in := int(n0.Src[0].Shape[0])
	xb, err := c.bytesOf(n0.Src[1])
	if err != nil {
		return err
	}
	x := f32s(xb)
	if len(x) < in {
		return fmt.Errorf("matmul %q: %d activations for rows of %d", n0.Name, len(x), in)
	}
	c.mt = matTask{c: c, tokens: 1}
	total, xrb, tb := 0, 0, 0
	for i, n := range nodes {
		k, err := quant.NewKernel(n.Src[0].Type, in)
		if err != nil {
			c.mt = matTask{}
			return fmt.Errorf("weight %q: %w", n.Src[0].Name, err)
		}
		wrb := k.WeightRowBytes()
		xrb, tb = k.ActRowBytes(), max(tb, k.Token1TableBytes())
		w, lay, err := c.matWeight(n.Src[0])
		if err != nil {
			c.mt = matTask{}
			return err
		}
		ob, err := c.bytesOf(n)
		if err != nil {
			c.mt = matTask{}
			return err
		}
		out := f32s(ob)
		rows := int(n.Src[0].Rows())
		if len(w) < wrb*rows || len(out) < rows {
			c.mt = matTask{}
			return fmt.Errorf("matmul %q: weight %q has %d bytes and %d outputs for %d rows of %d bytes", n.Name, n.Src[0].Name, len(w), len(out), rows, wrb)
		}
		c.mt.segs[i] = matSeg{w: w[:rows*wrb], out: out, base: total, rows: rows, lay: lay, k: k}
		total += rows
		c.weightReads.Add(int64(wrb * rows))
	}
	c.mt.nseg = len(nodes)
	if cap(c.scratch) < xrb {
		c.scratch = make([]byte, xrb)
	}
	xq := c.scratch[:xrb]
	if err := quant.QuantizeRow(quant.VecDotType(n0.Src[0].Type), x[:in], xq); err != nil {
		c.mt = matTask{}
		return err
	}
	c.mt.xq = xq
	if tb > 0 {
		if cap(c.tabs1) < tb {
			c.tabs1 = make([]byte, tb)
		}
		tab := c.tabs1[:tb]
		prepared := false
		for i := range c.mt.segs[:c.mt.nseg] {
			s := &c.mt.segs[i]
			if s.k.Token1TableBytes() == 0 {
				continue
			}
			if !prepared {
				s.k.PrepareToken1(xq, tab)
				prepared = true
			}
			s.tab = tab
		}
	}
	c.w.runGuided(total, decodeUnit, &c.mt)
	c.mt = matTask{}
	return nil
}

// runShared is matTask.run for a shared call: rows lo..hi-1 of the call,
// weight by weight.
func (t *matTask) runShared(worker, lo, hi int) {
	for i := 0; i < t.nseg; i++ {
		s := &t.segs[i]
		l, h := max(lo, s.base), min(hi, s.base+s.rows)
		if l < h {
			t.oneToken(worker, &s.k, s.w, 0, s.lay, t.xq, s.tab, s.out, l-s.base, h-s.base)
		}
	}
}
