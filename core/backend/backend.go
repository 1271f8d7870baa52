// Package backend defines what Minfer asks of a compute backend, runs a
// scheduled graph across backends, and keeps the registry of device
// backends by device kind.
package backend

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
)

// Backend is a device that holds buffers and weights and executes nodes.
//
// Compute may be asynchronous: it may return before the nodes have run, as
// long as the backend keeps their order. Everything that hands bytes back to
// the host (ReadHostWindow) waits for the work queued before it, and
// everything that takes bytes from the host (WriteHost, WriteHostWindow,
// RegisterWeight) is done with the caller's slice when it returns, so the
// caller may reuse it at once: a device copies into backend-owned (pinned)
// staging first.
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
	// ReadHostWindow copies ref's logical window into dst (len ref.Len),
	// after the work queued before it has finished.
	ReadHostWindow(ref alloc.BufRef, dst []byte) error
	// Compute runs nodes, in order, all assigned to this backend. It may
	// return before they finish (see the type's comment). A backend that
	// runs them on the calling goroutine checks ctx between blocks.
	Compute(ctx context.Context, nodes []*graph.Node) error
	Close() error
}

// HostWindower is a backend whose buffers are host memory the caller may
// read and write in place (the CPU). Staging copies use it to move bytes
// once, straight between the two backends' buffers.
type HostWindower interface {
	HostWindow(ref alloc.BufRef) ([]byte, error)
}

// BatchWriter is a backend that takes several host windows' writes at
// once (the CUDA backend: with no hand-off to its context's thread of
// their own, they go with its next request; a decode step writes four).
// The caller may reuse the payloads as soon as it returns.
type BatchWriter interface {
	WriteHostWindows(refs []alloc.BufRef, data [][]byte) error
}

// Gater is a device backend that can queue a run before one input is
// known (a decode step before its token: the host's work for the next step
// then overlaps this one). ComputeGated queues nodes (as Compute) behind a
// closed gate, the input window tok still to be written; OpenGate writes
// tok's bytes and lets the run go on. The caller opens the gate before any
// other request of the backend: one that comes first opens it itself, the
// run then takes zeros for tok, and OpenGate reports ErrGateOpened.
// Gating reports whether the device can do this at all.
type Gater interface {
	Gating() bool
	ComputeGated(ctx context.Context, nodes []*graph.Node, tok alloc.BufRef) error
	OpenGate(tok []byte) error
}

// ErrGateOpened: the gate was open before OpenGate (another request opened
// it with zeros), so the gated run's results are not its token's.
var ErrGateOpened = errors.New("backend: the gated run went on without its token")

// ThenReader is a backend whose read can let the caller queue more work
// before it waits: ReadHostWindowThen queues ref's copy, runs then (on the
// caller's goroutine), and waits for the copy only after.
type ThenReader interface {
	ReadHostWindowThen(ref alloc.BufRef, dst []byte, then func()) error
}

// HostPinner is a backend whose reads can land straight in host memory
// that the caller page-locks with it: PinHost registers p (memory the
// caller keeps alive and in place until UnpinHost), after which a read
// whose dst lies in p goes from the device into it without a copy through
// the backend's staging. An error leaves reads as they were.
type HostPinner interface {
	PinHost(p []byte) error
	UnpinHost(p []byte) error
}

// Overheader is a device backend that took memory before its first buffer
// (a CUDA context, loaded modules, a workspace): it reports the bytes,
// measured once, and what they are, so the session charges them to the E4
// gate and nothing on the device sits outside it.
type Overheader interface {
	OverheadBytes() (n int64, what string)
}

// Execute runs g's nodes on their assigned backends in order, moving bytes
// for the staging copies the scheduler inserted. Each maximal run of nodes
// on one backend is one Compute call (so a device sees a whole run at once
// and may queue or replay it without the host waiting); ctx is checked
// between runs and by the backends themselves.
//
// A staging copy between a host backend (HostWindower) and a device is one
// transfer: device→host reads straight into the host buffer (the device
// waits for its queued work first), host→device writes straight from it.
func Execute(ctx context.Context, g *graph.Graph, bes []Backend) error {
	// The run's slice comes from a pool: grown from nil it cost a decode
	// step about seven allocations (a 1B step has ~130 nodes).
	rp := runPool.Get().(*[]*graph.Node)
	run := (*rp)[:0]
	defer func() {
		clear(run[:cap(run)])
		*rp = run[:0]
		runPool.Put(rp)
	}()
	runBE := -1
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		err := bes[runBE].Compute(ctx, run)
		run = run[:0]
		if err != nil {
			return fmt.Errorf("backend: %s: %w", bes[runBE].Name(), err)
		}
		return nil
	}
	var tmp []byte
	for _, n := range g.Nodes {
		if n.Op.IsLeaf() || n.Op == graph.OpView {
			continue
		}
		if n.Op == graph.OpCopy {
			if err := flush(); err != nil {
				return err
			}
			var err error
			tmp, err = stage(bes, n, tmp)
			if err != nil {
				return fmt.Errorf("backend: staging %s: %w", n, err)
			}
			continue
		}
		if n.Backend != runBE {
			if err := flush(); err != nil {
				return err
			}
			runBE = n.Backend
		}
		run = append(run, n)
	}
	return flush()
}

// runPool holds the node slices Execute gathers its runs in (cleared
// before they go back, so a pooled slice keeps no graph alive).
var runPool = sync.Pool{New: func() any { s := make([]*graph.Node, 0, 256); return &s }}

// stage performs one staging copy, through tmp only when neither side
// exposes host memory.
func stage(bes []Backend, n *graph.Node, tmp []byte) ([]byte, error) {
	src := n.Src[0]
	from, to := bes[src.Backend], bes[n.Backend]
	if hw, ok := from.(HostWindower); ok {
		b, err := hw.HostWindow(src.Buf)
		if err != nil {
			return tmp, err
		}
		return tmp, to.WriteHostWindow(n.Buf, b)
	}
	if hw, ok := to.(HostWindower); ok {
		b, err := hw.HostWindow(n.Buf)
		if err != nil {
			return tmp, err
		}
		return tmp, from.ReadHostWindow(src.Buf, b)
	}
	if int64(cap(tmp)) < n.Buf.Len {
		tmp = make([]byte, n.Buf.Len)
	}
	tmp = tmp[:n.Buf.Len]
	if err := from.ReadHostWindow(src.Buf, tmp); err != nil {
		return tmp, err
	}
	return tmp, to.WriteHostWindow(n.Buf, tmp)
}

// PartsRegisterer is a device that assembles a tensor from parts in its
// own memory: one allocation, each part copied to its place in order (the
// fused device forms, model.Fusion), with no concatenated host copy. dims
// describe the whole; the parts' lengths add up to its size.
type PartsRegisterer interface {
	RegisterWeightParts(name string, t gguf.GGMLType, dims []int64, parts [][]byte) error
}

// MemInfoer is a device that measures its own memory (CUDA's
// cuMemGetInfo): free and total bytes now, every process's use included.
type MemInfoer interface {
	MemInfo() (free, total uint64, err error)
}
