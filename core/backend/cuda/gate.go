package cuda

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/internal/alloc"
)

// Gated runs. Between two decode steps the device idles while the host
// reads the logits, samples, builds the next step's graph, uploads its
// inputs, looks up and launches its captured graph: about 50 µs a step,
// 5 % of a 1B model's. Yet all of the next step but its token is known as
// soon as this step is queued. ComputeGated queues that step now, behind a
// gate: a cuStreamWaitValue32 on a pinned, device-mapped flag word, then
// the copy of the token from a pinned slot into the token input, then the
// run. OpenGate writes the token into the slot and the gate's number into
// the flag; the device, polling the word, goes on at once. So the host's
// work for a step overlaps the step before it, and only the read, the
// sampling and the flag write stay between two steps.
//
// A closed gate blocks the stream, so nothing else may be queued behind it
// unopened, and no one may wait for the stream: every request opens a
// closed gate first (beforeRequest; the run then takes token slot zeros,
// a valid token id, and OpenGate reports ErrGateOpened, so its caller
// knows the queued step was not its token's), and so does Close. A polled
// read that runs past its limit waits for the event recorded before the
// gate, never for the stream (readPolled's fallback), so a read queued
// before a gated run finishes however long the step takes.
//
// It needs the polled reads (the gated run's step reads its logits without
// a request) and the driver's cuStreamWaitValue32_v2; setup checks the wait
// on the flag word once. MINFER_CUDA_GATE=0 turns it off.

// gateSlotSize bounds the bytes OpenGate writes (a step's token ids).
const gateSlotSize = 256

const (
	gateFlagOff = 0
	gateSlotOff = 128
	gateAlloc   = gateSlotOff + gateSlotSize
)

// gate is the gated runs' flag word, token slot and event.
type gate struct {
	mu      sync.Mutex
	flag    *uint32 // the flag word (host view)
	slot    []byte  // the token slot (host view)
	pending bool    // a gate queued and not opened yet (under mu)
	n       int     // the pending gate's token bytes
	seq     uint32  // the last gate's number (under mu)

	// driver side, owner thread only
	host    uintptr // the pinned allocation (cuMemHostAlloc)
	flagDev uintptr // the flag word's device address
	ev      uintptr // recorded before each gate (the reads' fallback)
}

// ErrGateOpened is backend.ErrGateOpened: the gate was opened before
// OpenGate (by another request, or by a failure while queuing), so the
// gated run took zeros for its token.
var ErrGateOpened = backend.ErrGateOpened

// gateOff reports MINFER_CUDA_GATE=0.
func gateOff() bool { return os.Getenv("MINFER_CUDA_GATE") == "0" }

// setupGate creates the gate's pinned words and event and checks the
// stream wait on them (setup, on the owner, after setupPoll). Any failure
// leaves dv.gate nil: no gated runs, no error of the setup's.
func (dv *device) setupGate() {
	d := dv.d
	if gateOff() || dv.poll == nil || d.streamWaitValue32 == 0 {
		return
	}
	const deviceMap = 2 // CU_MEMHOSTALLOC_DEVICEMAP
	g := &gate{}
	if check("cuMemHostAlloc", sys(d.memHostAlloc, uintptr(unsafe.Pointer(&g.host)), gateAlloc, deviceMap)) != nil {
		return
	}
	all := hostSlice(g.host, gateAlloc)
	g.flag = (*uint32)(unsafe.Pointer(&all[gateFlagOff]))
	g.slot = all[gateSlotOff:gateAlloc:gateAlloc]
	const disableTiming = 2 // CU_EVENT_DISABLE_TIMING
	if check("cuMemHostGetDevicePointer", sys(d.memHostGetDevicePointer, uintptr(unsafe.Pointer(&g.flagDev)), g.host+gateFlagOff, 0)) != nil ||
		check("cuEventCreate", sys(d.eventCreate, uintptr(unsafe.Pointer(&g.ev)), disableTiming)) != nil {
		dv.freeGate(g)
		return
	}
	// The probe: a wait for a number the word already holds must pass.
	const probe = 0x67617465
	atomic.StoreUint32(g.flag, probe)
	if check("cuStreamWaitValue32", sys(d.streamWaitValue32, dv.stream, g.flagDev, probe, waitValueGEQ)) != nil ||
		check("cuStreamSynchronize", sys(d.streamSynchronize, dv.stream)) != nil {
		dv.freeGate(g)
		return
	}
	g.seq = probe
	dv.gate = g
}

// waitValueGEQ: CU_STREAM_WAIT_VALUE_GEQ, (int32)(*addr − value) ≥ 0, so
// the numbers may wrap.
const waitValueGEQ = 0

// freeGate releases g's event and pinned words (owner thread).
func (dv *device) freeGate(g *gate) {
	if g == nil {
		return
	}
	if g.ev != 0 {
		sys(dv.d.eventDestroy, g.ev)
		g.ev = 0
	}
	if g.host != 0 {
		sys(dv.d.memFreeHost, g.host)
		g.host, g.flag, g.slot = 0, nil, nil
	}
}

// open opens a pending gate with zeros for its token (under g.mu); it
// reports whether one was pending.
func (g *gate) open() bool {
	if !g.pending {
		return false
	}
	g.release(nil)
	return true
}

// release lets the pending gate go with data for its token (nil: zeros),
// under g.mu.
func (g *gate) release(data []byte) {
	if data == nil {
		clear(g.slot[:g.n])
	} else {
		copy(g.slot, data)
	}
	g.pending = false
	atomic.StoreUint32(g.flag, g.seq) // (a full fence: the slot's bytes are there before the number)
}

// openGate opens a pending gate with zeros (any goroutine; the requests'
// beforeRequest and Close).
func (dv *device) openGate() {
	if g := dv.gate; g != nil {
		g.mu.Lock()
		g.open()
		g.mu.Unlock()
	}
}

// Gating reports whether ComputeGated works on this device.
func (b *Backend) Gating() bool { return b.dv.gate != nil }

// ComputeGated queues nodes (as Compute does) behind a closed gate: the
// device stops before them until OpenGate, which writes tok's bytes (the
// window of the token input, tok.Len ≤ gateSlotSize bytes) first. The
// deferred input writes are uploaded before the gate. The caller opens the
// gate (OpenGate) before any other request of the backend; a request that
// comes first opens it with zeros (beforeRequest).
func (b *Backend) ComputeGated(ctx context.Context, nodes []*graph.Node, tok alloc.BufRef) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g := b.dv.gate
	if g == nil {
		return fmt.Errorf("%w: no gated runs on this device", errUnsupported)
	}
	if tok.Len <= 0 || tok.Len > gateSlotSize {
		return fmt.Errorf("cuda: a gated token window of %d bytes (at most %d)", tok.Len, gateSlotSize)
	}
	tp, err := b.window(tok)
	if err != nil {
		return err
	}
	return b.dv.t.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		d := b.dv.d
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.pending { // (beforeRequest opened any; never here)
			return fmt.Errorf("cuda: a gated run while another's gate is closed")
		}
		if err := check("cuEventRecord", sys(d.eventRecord, g.ev, b.dv.stream)); err != nil {
			return err
		}
		seq := g.seq + 1
		if err := check("cuStreamWaitValue32", sys(d.streamWaitValue32, b.dv.stream, g.flagDev, uintptr(seq), waitValueGEQ)); err != nil {
			return err
		}
		g.seq, g.n, g.pending = seq, int(tok.Len), true
		err := check("cuMemcpyHtoDAsync", sys(d.memcpyHtoDAsync, tp, g.host+gateSlotOff, uintptr(tok.Len), b.dv.stream))
		if err == nil {
			b.busyBefore()
			err = b.run(nodes)
			b.busyAfter()
		}
		if err != nil {
			g.open() // nothing may stay blocked behind a gate no one will open
		}
		return err
	})
}

// OpenGate lets the gated run go on with data (its token input's bytes).
// It returns ErrGateOpened when the gate was opened before (a request
// came first): the run then took zeros and its results are not data's.
func (b *Backend) OpenGate(data []byte) error {
	g := b.dv.gate
	if g == nil {
		return ErrGateOpened
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.pending {
		return ErrGateOpened
	}
	if len(data) != g.n {
		g.open()
		return fmt.Errorf("cuda: a gate of %d token bytes opened with %d", g.n, len(data))
	}
	g.release(data)
	return nil
}

// gateEvent is the event recorded before the last gate while one is
// pending, else 0 (the polled reads' fallback).
func (dv *device) gateEvent() uintptr {
	g := dv.gate
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.pending {
		return 0
	}
	return g.ev
}

var (
	_ backend.Gater      = (*Backend)(nil)
	_ backend.ThenReader = (*Backend)(nil)
)
