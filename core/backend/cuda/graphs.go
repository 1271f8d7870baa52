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
	// BlockInputs counts the runs whose input writes came from the pinned
	// input block (inputs.go), captured or replayed with them or issued
	// just before them.
	BlockInputs int
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
//
// The words go to six independent lanes — the node, its window's buffer
// and offset, its length, and its sources by slot (the third and fourth
// together) — folded into one hash at the end, so a word no longer waits
// for the previous word's multiply: a 1.1B decode run (356 nodes) took
// 3.0 µs as one chain and 2.0 µs in lanes with the nodes in L1/L2; with
// them in L3 only both take ~4 µs, out of every cache ~14 µs: there the
// node reads themselves are the cost (BenchmarkSignature, a 2-core EPYC;
// reading the same words unhashed takes 1.2 µs in cache). Every lane takes
// one word for every node (an empty source slot a word of its own), in
// order, so each lane still sees the run's order and length, and a source
// moved to another slot is seen too. Each step (h^v)*k, h^=h>>29 is a bijection of v for a
// given h and of h for a given v, so a change to any one word changes its
// lane's end state and, through the fold, the hash: a single moved window
// never hashes as the run it replaced.
func signature(nodes []*graph.Node) uint64 {
	const (
		k        = sigK
		seed     = sigSeed
		noSource = ^uint64(0) // an empty source slot
	)
	h0, h1, h2, h3, h4, h5 := seed, seed+1, seed+2, seed+3, seed+4, seed+5
	win := func(s *graph.Node) uint64 {
		if s == nil {
			return noSource // no window's word: buffer −1, offset −1
		}
		return uint64(s.Buf.ID)<<32 ^ uint64(s.Buf.Off)
	}
	for _, n := range nodes {
		h0 = (h0 ^ uint64(uintptr(unsafe.Pointer(n)))) * k
		h1 = (h1 ^ (uint64(n.Buf.ID)<<32 ^ uint64(n.Buf.Off))) * k
		h2 = (h2 ^ uint64(n.Buf.Len)) * k
		h3 = (h3 ^ win(n.Src[0])) * k
		h4 = (h4 ^ win(n.Src[1])) * k
		h5 = (h5 ^ win(n.Src[2])) * k
		h5 ^= h5 >> 29
		h5 = (h5 ^ win(n.Src[3])) * k
		h0 ^= h0 >> 29
		h1 ^= h1 >> 29
		h2 ^= h2 >> 29
		h3 ^= h3 >> 29
		h4 ^= h4 >> 29
		h5 ^= h5 >> 29
	}
	h := seed
	for _, v := range [...]uint64{uint64(len(nodes)), h0, h1, h2, h3, h4, h5} {
		h = sigStep(h, v)
	}
	return h
}

// The signatures' hash: seed, multiplier and one step (the lanes above
// split the step, the multiply and the shift, to interleave them).
const (
	sigK    = 0x9e3779b97f4a7c15
	sigSeed = uint64(14695981039346656037)
)

func sigStep(h, v uint64) uint64 {
	h = (h ^ v) * sigK
	return h ^ h>>29
}

// run issues nodes, after the deferred input writes (inputs.go): replayed
// from a captured graph, captured now (second sighting), or encoded
// eagerly. Writes gathered into the input block are part of the run: its
// signature covers them, a capture takes their copies in, and a replay
// issues them with the graph.
func (b *Backend) run(nodes []*graph.Node) error {
	ws, err := b.gatherInputs()
	if err != nil {
		return err
	}
	if len(ws) > 0 {
		b.graphs.stats.BlockInputs++
	}
	if c := b.curTrace; c != nil {
		c.preEnd = time.Now()
		c.looked = c.preEnd
	}
	if b.noGraphs {
		b.graphs.stats.Eager++
		if err := b.copyInputs(ws); err != nil {
			return err
		}
		return b.encode(nodes)
	}
	dv := b.dv
	sig := runSignature(nodes, ws)
	e := b.graphs.entry(dv, sig)
	if c := b.curTrace; c != nil {
		c.looked, c.replay = time.Now(), e.exec != 0
	}
	if e.exec != 0 {
		b.graphs.stats.Replays++
		if len(ws) > 0 {
			dv.in.queued() // the graph's copies read the block
		}
		return check("cuGraphLaunch", sys(dv.d.graphLaunch, e.exec, dv.stream))
	}
	if !e.seen {
		e.seen = true
		b.graphs.stats.Eager++
		if err := b.copyInputs(ws); err != nil {
			return err
		}
		return b.encode(nodes)
	}
	const captureThreadLocal = 1 // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
	if err := check("cuStreamBeginCapture", sys(dv.d.streamBeginCapture, dv.stream, captureThreadLocal)); err != nil {
		return err
	}
	// The copies are captured too: the graph reads the block each replay.
	encErr := b.copyInputs(ws)
	if encErr == nil {
		encErr = b.encode(nodes)
	}
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
	err = check("cuGraphInstantiate", sys(dv.d.graphInstantiate, uintptr(unsafe.Pointer(&exec)), g, 0))
	sys(dv.d.graphDestroy, g)
	if err != nil {
		return err
	}
	e.exec = exec
	b.graphs.stats.Captures++
	return check("cuGraphLaunch", sys(dv.d.graphLaunch, exec, dv.stream))
}
