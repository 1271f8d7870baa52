package graph

import (
	"fmt"
)

// Capability is what the assignment pass asks of a backend.
type Capability interface {
	Name() string
	// SupportsNode reports whether the backend can run n: its op, its
	// sources' types and shapes, its parameters. The plan, not the backend,
	// decides which blocks a device runs: the scheduler asks only about
	// nodes of blocks the plan puts on the device.
	SupportsNode(n *Node) bool
}

// Placement says on which backend each leaf's bytes already live.
type Placement interface {
	// WeightBackend is the backend holding a registered tensor or KV region.
	WeightBackend(name string) (int, bool)
}

// OffloadPlan is the slice of the E5 offload plan (docs/memory-policy.md) the scheduler reads.
type OffloadPlan interface {
	OnDevice(block int) bool
	DeviceHoldsUnblocked() bool
}

// AssignBackends gives every node a backend. backends[0] is the host (CPU),
// which runs everything; backends[1], when present, is the device, offered a
// node only when the plan puts its block there and the device supports it —
// never for a block past the plan. A node that reads bytes living on another
// backend gets a staging copy (OpCopy) inserted before it.
func AssignBackends(g *Graph, backends []Capability, plan OffloadPlan, where Placement) error {
	onDevice := func(layer int) bool {
		if len(backends) < 2 || plan == nil {
			return false
		}
		if layer == Unblocked {
			return plan.DeviceHoldsUnblocked()
		}
		return plan.OnDevice(layer)
	}
	for _, n := range g.Nodes {
		switch n.Op {
		case OpWeight, OpKV:
			b, ok := where.WeightBackend(n.Weight)
			if !ok {
				return fmt.Errorf("graph: %s %q is not registered on any backend", n.Op, n.Weight)
			}
			n.Backend = b
		case OpInput:
			n.Backend = 0 // moved to its first reader's backend below
		case OpView, OpStoreKV:
			n.Backend = n.Src[0].Backend
		default:
			n.Backend = 0
			if onDevice(n.Layer) && backends[1].SupportsNode(n) {
				n.Backend = 1
			}
		}
	}
	// Inputs live where their first reader runs.
	for _, n := range g.Nodes {
		for _, s := range n.Src {
			if s != nil && s.Op == OpInput && s.Backend == 0 && !s.firstSet {
				s.Backend = n.Backend
				s.firstSet = true
			}
		}
	}
	return insertCopies(g)
}

// insertCopies puts an OpCopy before every read of bytes that live on
// another backend; one copy serves every reader on the same backend.
func insertCopies(g *Graph) error {
	type key struct {
		src *Node
		be  int
	}
	copies := map[key]*Node{}
	out := make([]*Node, 0, len(g.Nodes))
	for _, n := range g.Nodes {
		if n.Op.IsLeaf() || n.Op == OpView {
			out = append(out, n)
			continue
		}
		for i, s := range n.Src {
			if s == nil || s.Backend == n.Backend {
				continue
			}
			// A cache written on one backend and read on another would go
			// stale; weights may be staged (a small tensor such as
			// rope_freqs read by blocks on both sides).
			if s.Op == OpKV || n.Op == OpStoreKV && i == 0 {
				return fmt.Errorf("graph: %s on backend %d reads %s held by backend %d: the load and the plan disagree", n, n.Backend, s, s.Backend)
			}
			k := key{s, n.Backend}
			c, ok := copies[k]
			if !ok {
				c = &Node{Op: OpCopy, Type: s.Type, Shape: s.Shape, Src: [4]*Node{s}, Layer: n.Layer, Name: s.Name + "→copy", Backend: n.Backend}
				copies[k] = c
				out = append(out, c)
			}
			n.Src[i] = c
		}
		out = append(out, n)
	}
	for i, n := range out {
		n.ID = i
	}
	g.Nodes = out
	g.release = nil // the topology changed
	return nil
}
