package cuda

import (
	"time"
	"unsafe"

	"github.com/minfer/minfer/core/graph"
)

// A decode step runs the same nodes on the same buffers every time (the
// GraphCache reuses the graph; the reservation table gives it the same
// slots; the per-step data — positions, mask, cache rows — is uploaded into
// those fixed buffers before the run). Such a run is captured as a CUDA
// graph the second time it is seen and replayed after that: one launch for
// the whole run instead of hundreds. The signature covers the nodes and
// every buffer window they touch, so a run whose placement changed is a
// different run; freeing any buffer (PoolGen moves) drops every capture.

// GraphStats counts runs by how they were issued.
type GraphStats struct {
	Eager, Captures, Replays int
}

type graphEntry struct {
	exec uintptr
	seen bool
}

type graphCache struct {
	entries map[uint64]*graphEntry
	order   []uint64
	stats   GraphStats
}

const maxGraphs = 32

func (c *graphCache) clear(dv *device) {
	for _, e := range c.entries {
		if e.exec != 0 {
			sys(dv.d.graphExecDestroy, e.exec)
		}
	}
	c.entries, c.order = nil, nil
}

func (c *graphCache) entry(dv *device, sig uint64) *graphEntry {
	if c.entries == nil {
		c.entries = map[uint64]*graphEntry{}
	}
	e, ok := c.entries[sig]
	if ok {
		return e
	}
	if len(c.order) >= maxGraphs {
		old := c.order[0]
		c.order = c.order[1:]
		if oe := c.entries[old]; oe != nil && oe.exec != 0 {
			sys(dv.d.graphExecDestroy, oe.exec)
		}
		delete(c.entries, old)
	}
	e = &graphEntry{}
	c.entries[sig] = e
	c.order = append(c.order, sig)
	return e
}

// signature hashes the run: node identities and the windows they read and
// write, a 64-bit word at a time (multiply and fold, each word's bits
// spread over the whole state before the next).
func signature(nodes []*graph.Node) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) {
		h = (h ^ v) * 0x9e3779b97f4a7c15
		h ^= h >> 29
	}
	for _, n := range nodes {
		mix(uint64(uintptr(unsafe.Pointer(n))))
		mix(uint64(n.Buf.ID)<<32 ^ uint64(n.Buf.Off))
		mix(uint64(n.Buf.Len))
		for _, s := range n.Src {
			if s != nil {
				mix(uint64(s.Buf.ID)<<32 ^ uint64(s.Buf.Off))
			}
		}
	}
	return h
}

// run issues nodes: replayed from a captured graph, captured now (second
// sighting), or encoded eagerly.
func (b *Backend) run(nodes []*graph.Node) error {
	if b.noGraphs {
		b.graphs.stats.Eager++
		return b.encode(nodes)
	}
	dv := b.dv
	sig := signature(nodes)
	e := b.graphs.entry(dv, sig)
	if c := b.curTrace; c != nil {
		c.looked, c.replay = time.Now(), e.exec != 0
	}
	if e.exec != 0 {
		b.graphs.stats.Replays++
		return check("cuGraphLaunch", sys(dv.d.graphLaunch, e.exec, dv.stream))
	}
	if !e.seen {
		e.seen = true
		b.graphs.stats.Eager++
		return b.encode(nodes)
	}
	const captureThreadLocal = 1 // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
	if err := check("cuStreamBeginCapture", sys(dv.d.streamBeginCapture, dv.stream, captureThreadLocal)); err != nil {
		return err
	}
	encErr := b.encode(nodes)
	var g uintptr
	endErr := check("cuStreamEndCapture", sys(dv.d.streamEndCapture, dv.stream, uintptr(unsafe.Pointer(&g))))
	if encErr != nil || endErr != nil {
		if g != 0 {
			sys(dv.d.graphDestroy, g)
		}
		if encErr != nil {
			return encErr
		}
		return endErr
	}
	var exec uintptr
	err := check("cuGraphInstantiate", sys(dv.d.graphInstantiate, uintptr(unsafe.Pointer(&exec)), g, 0))
	sys(dv.d.graphDestroy, g)
	if err != nil {
		return err
	}
	e.exec = exec
	b.graphs.stats.Captures++
	return check("cuGraphLaunch", sys(dv.d.graphLaunch, exec, dv.stream))
}
