package graph

import (
	"fmt"

	"github.com/minfer/minfer/internal/alloc"
)

// owner is the node whose buffer n's bytes live in: views and in-place
// aliases (StoreKV) resolve to their source.
func owner(n *Node) *Node {
	for {
		switch n.Op {
		case OpView, OpStoreKV:
			n = n.Src[0]
		default:
			return n
		}
	}
}

// Deadlines computes, for every buffer-owning node, the index of the last
// node that reads it. A read through a view or an alias extends the owner's
// deadline (owner resolves it to the buffer it reads): releasing the owner
// at its own last direct use would hand its bytes to another node while the
// view still reads them. Graph outputs live to the end.
func Deadlines(g *Graph) map[*Node]int {
	dl := make(map[*Node]int, len(g.Nodes))
	for i, n := range g.Nodes {
		o := owner(n)
		if _, ok := dl[o]; !ok {
			dl[o] = i
		}
		for _, s := range n.Src {
			if s == nil {
				continue
			}
			so := owner(s)
			if dl[so] < i {
				dl[so] = i
			}
		}
	}
	end := len(g.Nodes)
	for _, out := range g.Outputs {
		dl[owner(out)] = end
	}
	return dl
}

// releaseSchedule lists, for each node index, the owners whose buffers go
// back after that node, in node order (deterministic slots). It depends only
// on the topology, so a reused graph computes it once.
func (g *Graph) releaseSchedule() [][]*Node {
	if g.release != nil {
		return g.release
	}
	sched := make([][]*Node, len(g.Nodes)+1)
	for o, d := range Deadlines(g) {
		if !o.Op.IsLeaf() || o.Op == OpInput {
			sched[d] = append(sched[d], o)
		}
	}
	for _, rel := range sched {
		sortNodes(rel)
	}
	g.release = sched
	return sched
}

// Persistent resolves a KV node to its persistent region.
type Persistent func(name string) (alloc.BufRef, bool)

// Allocate places every node's bytes through the allocator. All inputs are
// placed before the walk, so an input (filled from the host before the graph
// runs) never takes a buffer that this walk's sweep released. Then each
// compute node takes a pool buffer and each owner whose deadline has passed
// goes back to the reservation table. With the same topology and an idle
// table, the same slots come back: a rebuild allocates nothing.
//
// The buffers still held after the walk (inputs and outputs alive to the end)
// are released by Release once the caller has read the outputs.
func Allocate(g *Graph, ga *alloc.GraphAllocator, kv Persistent) error {
	// The fast path: the allocator is where this graph's last Release
	// left it, so the walk would place every node where it is now; take
	// back the buffers it would end holding (the inputs and outputs).
	if g.lastGA == ga && len(g.last) > 0 && ga.Gen() == g.lastGen {
		g.refs = g.refs[:0]
		for _, n := range g.last {
			g.refs = append(g.refs, n.Buf)
		}
		if ga.Reacquire(g.refs) {
			g.held, g.last = g.last, g.held[:0]
			g.lastGA = nil
			return nil
		}
	}
	g.lastGA = nil
	byDeadline := g.releaseSchedule()
	// held lists what this walk placed; a node's relGen == gen marks it
	// released by this walk. Both persist in g, so a decode step's walk
	// allocates nothing.
	held := g.walk[:0]
	g.allocGen++
	gen := g.allocGen
	released := func(n *Node) bool { return n.relGen == gen }
	abort := func() { // on error: give back what this walk still holds
		for _, n := range held {
			if !released(n) {
				ga.Release(n.Buf)
			}
		}
		g.walk = held[:0]
	}
	place := func(n *Node) error {
		var (
			ref alloc.BufRef
			err error
		)
		if n.Op == OpCopy {
			ref, err = ga.AllocStaging(n.Backend, n.Bytes())
		} else {
			ref, err = ga.AllocInPool(n.Backend, n.Bytes())
		}
		if err != nil {
			return fmt.Errorf("graph: placing %s: %w", n, err)
		}
		n.Buf = ref
		held = append(held, n)
		return nil
	}
	for _, n := range g.Nodes {
		if n.Op == OpInput {
			if err := place(n); err != nil {
				abort()
				return err
			}
		}
	}
	for i, n := range g.Nodes {
		switch n.Op {
		case OpInput, OpWeight:
		case OpKV:
			ref, ok := kv(n.Weight)
			if !ok {
				abort()
				return fmt.Errorf("graph: no persistent region %q", n.Weight)
			}
			n.Buf = ref
		case OpView:
			src := n.Src[0]
			n.Buf = src.Buf
			n.Buf.Off += n.ViewOff
			n.Buf.Len = n.Bytes()
			n.Backend = src.Backend
		case OpStoreKV:
			n.Buf = n.Src[0].Buf
			n.Backend = n.Src[0].Backend
		default:
			if err := place(n); err != nil {
				abort()
				return err
			}
		}
		for _, o := range byDeadline[i] {
			ga.Release(o.Buf)
			o.relGen = gen
		}
	}
	g.walk = held
	g.held = g.held[:0]
	for _, n := range held {
		if !released(n) {
			g.held = append(g.held, n)
		}
	}
	return nil
}

// Release returns the buffers still held after execution (inputs and
// outputs) to the reservation table. Call it once the outputs are read.
func Release(g *Graph, ga *alloc.GraphAllocator) {
	releaseAll(ga, g.held)
	g.held, g.last = g.last[:0], g.held
	g.lastGA, g.lastGen = ga, ga.Gen()
}

func releaseAll(ga *alloc.GraphAllocator, ns []*Node) {
	for _, n := range ns {
		ga.Release(n.Buf)
	}
}

func sortNodes(ns []*Node) {
	for i := 1; i < len(ns); i++ {
		for j := i; j > 0 && ns[j].ID < ns[j-1].ID; j-- {
			ns[j], ns[j-1] = ns[j-1], ns[j]
		}
	}
}
