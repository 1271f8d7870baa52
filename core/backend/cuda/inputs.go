package cuda

import (
	"sync/atomic"

	"github.com/minfer/minfer/core/graph"
)

// A decode step's inputs (tokens, positions, cache rows, mask: four small
// windows, each in a buffer of its own) used to cost four
// cuMemcpyHtoDAsync calls on the host before every run, each through a
// fresh span of the pinned ring (the ring is reused only after a stream
// synchronize, so no later write reaches bytes a queued copy has yet to
// read). A replayed graph can carry those copies itself: a captured
// host-to-device copy reads its pinned source when the graph runs, so if a
// step's writes are gathered at the same places of one pinned block every
// time, the graph captured with their copies replays them, and the step's
// inputs cost no driver call at all.
//
// The block (the ring's last inputBlockSize bytes) is written on the owner
// thread only when no queued copy may still read it:
//
//   - busy is set whenever copies from it are queued (issued, captured or
//     replayed) and cleared by a stream synchronize;
//   - the first polled read queued after that (a decode step's logits:
//     readpoll.go) fences it: once the stream has written that read's
//     number to the flag word, every copy queued before it has run;
//
// and a Compute that finds it busy and unfenced, or has more bytes than
// it holds, uploads its writes through the ring as before, before the run
// and outside its graph. The signature covers the gathered writes (each
// destination, length and place in the block), so a graph with copies is
// replayed only for the same writes at the same places, and a run without
// them is a different run. Stream order keeps every copy after the work
// queued before it and before the kernels after it, captured or not.
//
// The trade: the host's four calls (~2.2 µs each on an H100 host: the
// 9.2 µs inputs phase, of which the Go side is ~0.3 µs,
// BenchmarkDecodeInputs) go, but the copies move from before the lookup
// and launch, where they ran while the host worked, into the graph, ahead
// of its first kernel: the step gains the host time less the graph's four
// copy nodes' device time. MINFER_CUDA_INPUTS=ring keeps every write on the
// ring, outside the graphs, for that comparison.

// inputBlockSize is the input block's size: a decode step's writes (a mask
// of 4 bytes a cache row, a few words) with room for long contexts.
const inputBlockSize = 1 << 20

// ringSize is the ring's part of the pinned staging.
const ringSize = pinnedSize - inputBlockSize

// inputBlock is the state of the pinned input block (owner thread only).
type inputBlock struct {
	busy   bool   // copies queued from the block may not have read it yet
	fenced bool   // a polled read queued after them: fence says when they ran
	fence  uint32 // that read's number
	// copies counts the host-to-device copies issued (tests: the driver
	// calls a step's inputs cost).
	copies uint64
}

// queued marks copies from the block queued on the stream.
func (in *inputBlock) queued() { in.busy, in.fenced = true, false }

// pollQueued notes a polled read's number seq queued on the stream: the
// first after copies from the block fences them.
func (in *inputBlock) pollQueued(seq uint32) {
	if in.busy && !in.fenced {
		in.fenced, in.fence = true, seq
	}
}

// free reports whether the block may be written: no copy from it queued,
// or the fence's number already on the flag word (nil: no polled reads).
func (in *inputBlock) free(flag *uint32) bool {
	if !in.busy {
		return true
	}
	if in.fenced && flag != nil && reached(atomic.LoadUint32(flag), in.fence) {
		in.busy = false
		return true
	}
	return false
}

// htod queues a host-to-device copy of n bytes from pinned src to dst.
func (dv *device) htod(dst, src uintptr, n int) error {
	dv.in.copies++
	if dv.htodHook != nil {
		return dv.htodHook(dst, src, n)
	}
	return check("cuMemcpyHtoDAsync", sys(dv.d.memcpyHtoDAsync, dst, src, uintptr(n), dv.stream))
}

// pollFlagWord is the polled reads' flag word, nil without them.
func (dv *device) pollFlagWord() *uint32 {
	if dv.poll == nil {
		return nil
	}
	return dv.poll.flag
}

// gatherInputs takes the deferred writes for a Compute (owner thread):
// into the input block, returned for the run to sign and copy, when the
// block is free and they fit; otherwise uploaded through the ring now,
// as any other request's are, and none returned.
func (b *Backend) gatherInputs() ([]pendingWrite, error) {
	b.pmu.Lock()
	defer b.pmu.Unlock()
	if len(b.pending) == 0 {
		return nil, nil
	}
	dv := b.dv
	if b.inputsRing || len(b.pendData) > inputBlockSize || !dv.in.free(dv.pollFlagWord()) {
		return nil, b.flushPendingLocked()
	}
	// The payloads go in as WriteHostWindows packed them: each write's
	// place in the block is its place in pendData.
	copy(dv.pinnedBuf[ringSize:], b.pendData)
	b.runWrites = append(b.runWrites[:0], b.pending...)
	b.pending, b.pendData = b.pending[:0], b.pendData[:0]
	return b.runWrites, nil
}

// copyInputs queues the gathered writes' copies out of the input block
// (into the stream, or into the graph being captured).
func (b *Backend) copyInputs(ws []pendingWrite) error {
	dv := b.dv
	for _, w := range ws {
		if err := dv.htod(w.dst, dv.pinned+ringSize+uintptr(w.off), w.n); err != nil {
			return err
		}
	}
	if len(ws) > 0 {
		dv.in.queued()
	}
	return nil
}

// signWrites folds the gathered writes (destination, length and place in
// the block) into a run's signature; a run with none keeps its own.
func signWrites(h uint64, ws []pendingWrite) uint64 {
	if len(ws) == 0 {
		return h
	}
	h = sigStep(h, uint64(len(ws)))
	for _, w := range ws {
		h = sigStep(h, uint64(w.dst))
		h = sigStep(h, uint64(w.off)<<32^uint64(w.n))
	}
	return h
}

// runSignature is the signature of nodes run with the gathered writes ws.
func runSignature(nodes []*graph.Node, ws []pendingWrite) uint64 {
	return signWrites(signature(nodes), ws)
}
