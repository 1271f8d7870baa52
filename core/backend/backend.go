// Package backend defines what Minfer asks of a compute backend and runs a
// scheduled graph across backends.
package backend

import (
	"context"
	"fmt"

	"github.com/minfer/minfer/core/alloc"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/gguf"
)

// Backend is a device that holds buffers and weights and executes nodes.
type Backend interface {
	alloc.Buffers
	graph.Capability
	// RegisterWeight makes a model tensor resident. data is a view of the
	// mapped file: the CPU uses it in place, a device copies it.
	RegisterWeight(name string, t gguf.GGMLType, dims []int64, data []byte) error
	// WriteHost fills a whole buffer; len(data) must equal its size
	// (persistent KV regions, staging).
	WriteHost(id alloc.BufID, data []byte) error
	// WriteHostWindow fills ref's logical window; len(data) must equal
	// ref.Len, never the class size behind it.
	WriteHostWindow(ref alloc.BufRef, data []byte) error
	// ReadHostWindow copies ref's logical window into dst (len ref.Len).
	ReadHostWindow(ref alloc.BufRef, dst []byte) error
	// Compute runs nodes, in order, all assigned to this backend.
	Compute(nodes []*graph.Node) error
	Close() error
}

// Execute runs g's nodes on their assigned backends in order, moving bytes
// for the staging copies the scheduler inserted. It checks ctx between
// backend runs and between layers.
func Execute(ctx context.Context, g *graph.Graph, bes []Backend) error {
	var run []*graph.Node
	runBE := -1
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		err := bes[runBE].Compute(run)
		run = run[:0]
		if err != nil {
			return fmt.Errorf("backend: %s: %w", bes[runBE].Name(), err)
		}
		return nil
	}
	lastLayer := graph.Unblocked
	var tmp []byte
	for _, n := range g.Nodes {
		if n.Op.IsLeaf() || n.Op == graph.OpView {
			continue
		}
		if n.Op == graph.OpCopy {
			if err := flush(); err != nil {
				return err
			}
			src := n.Src[0]
			if int64(cap(tmp)) < n.Buf.Len {
				tmp = make([]byte, n.Buf.Len)
			}
			tmp = tmp[:n.Buf.Len]
			if err := bes[src.Backend].ReadHostWindow(src.Buf, tmp); err != nil {
				return fmt.Errorf("backend: staging %s: %w", n, err)
			}
			if err := bes[n.Backend].WriteHostWindow(n.Buf, tmp); err != nil {
				return fmt.Errorf("backend: staging %s: %w", n, err)
			}
			continue
		}
		if n.Backend != runBE || n.Layer != lastLayer {
			if err := flush(); err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			runBE, lastLayer = n.Backend, n.Layer
		}
		run = append(run, n)
	}
	return flush()
}
