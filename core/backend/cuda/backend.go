// Package cuda is Minfer's NVIDIA GPU backend: the CUDA driver API
// (libcuda.so.1, nvcuda.dll) reached through purego, so a CGO_ENABLED=0
// binary drives the GPU and neither the build nor the user needs a CUDA
// toolkit; kernels are embedded PTX (see ptx.go).
//
// Threading: a backend owns one CUDA context (the device's primary
// context) and one goroutine locked to an OS thread that makes every driver
// call for it (thread.go). The methods may be called from any goroutine;
// they hand their work to that thread (spinning briefly on both sides before
// parking: MINFER_CUDA_SPIN).
//
// Compute is asynchronous: it queues kernels on the backend's stream and
// returns; ReadHostWindow waits for the queued work (a small read, such as
// the logits, by polling a flag the stream writes after the copy:
// readpoll.go). Writes from the host go through a pinned ring and return
// once the caller's slice may be reused; a decode step's input writes ride
// in its captured graph instead (inputs.go).
// A run of nodes that repeats with the same buffers is captured as a CUDA
// graph on its second sighting and replayed from then on (graphs.go).
package cuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
)

var (
	_ backend.Backend         = (*Backend)(nil)
	_ backend.Overheader      = (*Backend)(nil)
	_ backend.PartsRegisterer = (*Backend)(nil)
	_ backend.MemInfoer       = (*Backend)(nil)
	_ backend.BatchWriter     = (*Backend)(nil)
)

type devBuf struct {
	ptr  uintptr
	size int64
}

type weight struct {
	ptr  uintptr
	t    gguf.GGMLType
	dims []int64
	size int64
}

// Backend is one NVIDIA GPU.
type Backend struct {
	dv *device

	mu      sync.Mutex // guards the maps for reports from other goroutines
	bufs    map[alloc.BufID]devBuf
	nextID  alloc.BufID
	weights map[string]*weight
	wbytes  int64
	poolGen int64
	closed  bool

	overhead int64
	ohWhat   string

	l launcher
	// lastQuant is the mat-mul source whose activations the workspace holds
	// (quantized to lastVT) while encoding: consecutive mat-muls of one
	// input (q/k/v, gate/up) quantize it once. Only encode touches it, on
	// the backend's thread.
	lastQuant *graph.Node
	lastVT    gguf.GGMLType
	// lastQuantOff is where in the workspace lastQuant's activations lie:
	// 0 but after swigluMatVec (whose kernel writes them past the
	// activations its blocks are still reading). The mat-vec paths that
	// read the workspace's start quantize again unless it is 0.
	lastQuantOff uintptr
	// encodeStart is l.launched when encode began (cachesQuietBefore).
	encodeStart uint64
	graphs      graphCache
	// noGraphs disables capture (MINFER_CUDA_GRAPHS=0), for comparisons.
	noGraphs bool
	// off: the decode paths switched off (MINFER_CUDA_DECODE).
	off decodeOff
	// mvV1 keeps the unstaged mvf_* mat-vecs (MINFER_CUDA_MV=v1).
	mvV1 bool
	// mvsWarps is the warps of a one-token staged mat-vec block
	// (MINFER_CUDA_MVS_WARPS); 0: oneTokenWarps (warpsFor).
	mvsWarps int64
	// splitRows is the rows of a split mat-vec block (mvk_*_1:
	// MINFER_CUDA_MVK_ROWS, 2, 4 or 8; defaultSplitRows otherwise).
	splitRows int64
	// norm1Threads caps norm_one's block (MINFER_CUDA_NORM1_THREADS: 256,
	// 512 or 1024, for comparisons; 0: 1024); a row never gets fewer than
	// its NORM1_K elements a thread need. Smaller blocks were slower on an
	// H100 (bench/results/2026-12-07-s20-call2: 1.1B decode −2 to −4 % at
	// 256, 8B no gain at 512).
	norm1Threads int64
	// fattnNoKeep: the flash kernels recompute scores in every pass
	// (MINFER_CUDA_FATTN=nokeep); fattnKeeps counts the launches that
	// kept them (tests).
	fattnNoKeep bool
	// fattnWide: head size 128 on the 512-thread flash kernel (the
	// default; MINFER_CUDA_FATTN=narrow for the 256-thread one).
	fattnWide  bool
	fattnKeeps int
	// usedFor: the mask whose cells in use device.usedAt holds in this
	// encode (attnUsedOnce); usedReuses counts the attentions that read
	// it without a launch of their own (tests).
	usedFor    usedMask
	usedReuses int
	// fattnExact: every head size on the exact flash kernels (fattn.cu),
	// none on the tensor-core ones (MINFER_CUDA_FATTN=exact, nokeep or
	// narrow). fattnMMAAll: the tensor-core ones for every model, quantized
	// weights or not (MINFER_CUDA_FATTN=mma). quantWeights: a quantized
	// weight is registered (fattn.go: such a model's prefill attention
	// keeps the exact kernels for short batches unless fattnMMAAll).
	fattnExact, fattnMMAAll, quantWeights bool
	// flash: the prefill attentions queued on each kind of flash kernel
	// (FlashStats).
	flash FlashStats
	// busy: the device-time spans (busy.go), on the backend's thread.
	busy busyTimer
	// pending: input writes deferred to the next request (WriteHostWindows),
	// their payloads in pendData; pmu guards both.
	pmu      sync.Mutex
	pending  []pendingWrite
	pendData []byte
	// runWrites: the writes a Compute gathered into the input block
	// (inputs.go), owner thread only. inputsRing keeps every write on the
	// ring, outside the graphs (MINFER_CUDA_INPUTS=ring), for comparisons.
	runWrites  []pendingWrite
	inputsRing bool
	// trace: the host time split (MINFER_CUDA_TRACE, trace.go); nil: off.
	// trPreStart and curTrace are the owner's while a Compute runs.
	trace      *hostTrace
	trPreStart time.Time
	curTrace   *computeTrace
}

// Options tune Open.
type Options struct {
	// Ordinal is the CUDA device (0: the first CUDA_VISIBLE_DEVICES entry).
	Ordinal int
	// ReportedFree is the device's free memory as the plan saw it before
	// this context existed (NVML), 0 when unknown: the context's own cost
	// is then measured against it and charged.
	ReportedFree uint64
}

// Open creates the backend: the context, the stream, the kernels, pinned
// staging and the workspace. A missing driver is an error wrapping
// ErrNoDriver.
func Open(o Options) (*Backend, error) {
	dv, err := openDevice(int32(o.Ordinal))
	if err != nil {
		return nil, err
	}
	b := &Backend{dv: dv, bufs: map[alloc.BufID]devBuf{}, nextID: 1, weights: map[string]*weight{}}
	b.trace = traceFromEnv()
	dv.t.pre = b.beforeRequest
	b.noGraphs = os.Getenv("MINFER_CUDA_GRAPHS") == "0"
	b.inputsRing = os.Getenv("MINFER_CUDA_INPUTS") == "ring"
	b.off = parseDecodeOff(decodeOffFromEnv())
	b.mvV1 = mvV1FromEnv()
	b.mvsWarps = mvsWarpsFromEnv()
	b.splitRows = splitRowsFromEnv()
	b.norm1Threads = norm1ThreadsFromEnv()
	fm := fattnModeFromEnv()
	b.fattnNoKeep, b.fattnWide, b.fattnExact, b.fattnMMAAll = fm.noKeep, !fm.narrow, fm.exact, fm.mmaAll
	// What the setup took: modules, workspace (and, when the plan's answer
	// predates this context, the context itself).
	setup := int64(dv.freeAfterCtx) - int64(dv.freeAfterSetup)
	b.overhead, b.ohWhat = max(setup, 0), "the CUDA modules and workspace"
	if o.ReportedFree > 0 {
		if all := int64(o.ReportedFree) - int64(dv.freeAfterSetup); all > b.overhead && all < 4<<30 {
			b.overhead, b.ohWhat = all, "the CUDA context, modules and workspace"
		}
	}
	return b, nil
}

// Name is the device's name.
func (b *Backend) Name() string { return "CUDA " + b.dv.name }

// Describe is e.g. "CUDA 13.0 driver, compute 9.0".
func (b *Backend) Describe() string {
	return fmt.Sprintf("CUDA %s driver, compute %d.%d", versionString(b.dv.drvVersion), b.dv.ccMajor, b.dv.ccMinor)
}

// ProgrammaticLaunch reports whether kernels launch with programmatic
// dependent launch (pdl.go): compute 9.0 or later, a driver with
// cuLaunchKernelEx, and MINFER_CUDA_PDL not 0.
func (b *Backend) ProgrammaticLaunch() bool { return b.dv.pdl }

// OverheadBytes is what the context, modules and workspace took, measured
// once with cuMemGetInfo.
func (b *Backend) OverheadBytes() (int64, string) { return b.overhead, b.ohWhat }

// MemInfo is cuMemGetInfo now.
func (b *Backend) MemInfo() (free, total uint64, err error) {
	err = b.dv.t.do(func() error {
		var e error
		free, total, e = b.dv.d.memInfo()
		return e
	})
	return
}

// PoolGen counts buffer allocations and frees: captured graphs are valid
// while it stays still (docs/memory-policy.md, E4: a rebuild allocates
// nothing).
func (b *Backend) PoolGen() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.poolGen
}

// GraphStats reports captured-graph replays.
func (b *Backend) GraphStats() GraphStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.graphs.stats
}

func (b *Backend) alive() error {
	if b.closed {
		return ErrClosed
	}
	return nil
}

// AllocBuffer allocates size bytes of device memory (zeroed).
func (b *Backend) AllocBuffer(size int64) (alloc.BufID, error) {
	if size <= 0 {
		return 0, fmt.Errorf("cuda: buffer of %d bytes", size)
	}
	var p uintptr
	err := b.dv.t.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		if err := check("cuMemAlloc", sys(b.dv.d.memAlloc, uintptr(unsafe.Pointer(&p)), uintptr(size))); err != nil {
			return err
		}
		return b.dv.memset(p, size)
	})
	if err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.nextID
	b.nextID++
	b.bufs[id] = devBuf{p, size}
	b.poolGen++
	return id, nil
}

// FreeBuffer frees a buffer (and drops captured graphs: PoolGen moved).
func (b *Backend) FreeBuffer(id alloc.BufID) error {
	b.mu.Lock()
	buf, ok := b.bufs[id]
	delete(b.bufs, id)
	b.poolGen++
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("cuda: free of unknown buffer %d", id)
	}
	return b.dv.t.do(func() error {
		b.graphs.clear(b.dv)
		return check("cuMemFree", sys(b.dv.d.memFree, buf.ptr))
	})
}

// WeightsBytes is the bytes of every tensor copied to the device.
func (b *Backend) WeightsBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.wbytes
}

// RegisterWeight copies a tensor to the device (through pinned staging,
// asynchronously: the copy is ordered before any kernel that reads it).
func (b *Backend) RegisterWeight(name string, t gguf.GGMLType, dims []int64, data []byte) error {
	return b.RegisterWeightParts(name, t, dims, [][]byte{data})
}

// RegisterWeightParts assembles a tensor on the device from parts: one
// allocation, each part copied to its place in order (a fused device form:
// Q|K|V rows, gate|up rows), with no concatenated host copy.
func (b *Backend) RegisterWeightParts(name string, t gguf.GGMLType, dims []int64, parts [][]byte) error {
	b.mu.Lock()
	_, dup := b.weights[name]
	b.mu.Unlock()
	if dup {
		return fmt.Errorf("cuda: weight %q registered twice", name)
	}
	var size int64
	for _, p := range parts {
		size += int64(len(p))
	}
	if size == 0 {
		return fmt.Errorf("cuda: weight %q is empty", name)
	}
	w := &weight{t: t, dims: append([]int64(nil), dims...), size: size}
	err := b.dv.t.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		if err := check("cuMemAlloc", sys(b.dv.d.memAlloc, uintptr(unsafe.Pointer(&w.ptr)), uintptr(size))); err != nil {
			return err
		}
		off := uintptr(0)
		for _, p := range parts {
			if err := b.dv.upload(w.ptr+off, p); err != nil {
				sys(b.dv.d.memFree, w.ptr)
				return err
			}
			off += uintptr(len(p))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cuda: weight %q: %w", name, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.weights[name] = w
	b.wbytes += w.size
	b.quantWeights = b.quantWeights || t.IsQuantized()
	return nil
}

func (b *Backend) window(ref alloc.BufRef) (uintptr, error) {
	b.mu.Lock()
	buf, ok := b.bufs[ref.ID]
	b.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("cuda: unknown buffer %d", ref.ID)
	}
	if ref.Off < 0 || ref.Len < 0 || ref.Off+ref.Len > buf.size {
		return 0, fmt.Errorf("cuda: window %d..%d outside buffer %d of %d bytes", ref.Off, ref.Off+ref.Len, ref.ID, buf.size)
	}
	return buf.ptr + uintptr(ref.Off), nil
}

// WriteHost fills a whole buffer (exact length).
func (b *Backend) WriteHost(id alloc.BufID, data []byte) error {
	b.mu.Lock()
	buf, ok := b.bufs[id]
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("cuda: unknown buffer %d", id)
	}
	if int64(len(data)) != buf.size {
		return fmt.Errorf("cuda: write of %d bytes into buffer %d of %d bytes (exact length required)", len(data), id, buf.size)
	}
	return b.dv.t.do(func() error { return b.dv.upload(buf.ptr, data) })
}

// WriteHostWindow fills ref's logical window.
func (b *Backend) WriteHostWindow(ref alloc.BufRef, data []byte) error {
	if int64(len(data)) != ref.Len {
		return fmt.Errorf("cuda: write of %d bytes into a window of %d", len(data), ref.Len)
	}
	p, err := b.window(ref)
	if err != nil {
		return err
	}
	return b.dv.t.do(func() error { return b.dv.upload(p, data) })
}

// WriteHostWindows fills each refs[i]'s window with data[i]. It makes no
// request of its own: the payloads are copied aside (the caller may reuse
// its slices at once) and uploaded at the start of the backend's next
// request (a decode step's: its Compute), in order, before that request's
// work (a Compute's in its graph where it can: inputs.go); an upload's
// error is that request's.
func (b *Backend) WriteHostWindows(refs []alloc.BufRef, data [][]byte) error {
	if len(refs) != len(data) {
		return fmt.Errorf("cuda: %d windows and %d payloads", len(refs), len(data))
	}
	var ptrs [8]uintptr
	ps := ptrs[:0]
	for i, ref := range refs {
		if int64(len(data[i])) != ref.Len {
			return fmt.Errorf("cuda: write of %d bytes into a window of %d", len(data[i]), ref.Len)
		}
		p, err := b.window(ref)
		if err != nil {
			return err
		}
		ps = append(ps, p)
	}
	b.pmu.Lock()
	defer b.pmu.Unlock()
	for i, p := range ps {
		// Each payload starts on a cache line (the input block's copies
		// read it in place: inputs.go).
		off := (len(b.pendData) + 63) &^ 63
		b.pendData = append(b.pendData, make([]byte, off-len(b.pendData))...)
		b.pendData = append(b.pendData, data[i]...)
		b.pending = append(b.pending, pendingWrite{p, off, len(data[i])})
	}
	return nil
}

// pendingWrite is a deferred upload of pendData[off:off+n] to dst.
type pendingWrite struct {
	dst    uintptr
	off, n int
}

// beforeRequest runs first in every request (thread.pre): it closes a busy
// span a polled read ended and uploads the deferred writes, but for a
// Compute's, whose run takes them itself (gatherInputs).
func (b *Backend) beforeRequest() error {
	b.dv.openGate() // nothing may queue behind a closed gate (gate.go)
	b.busySettle()
	if b.trace != nil {
		b.trPreStart = time.Now()
	}
	if b.dv.t.runReq {
		return nil
	}
	return b.flushPending()
}

// flushPending uploads the deferred writes through the ring (on the
// backend's thread, first in every request but a Compute: thread.pre).
func (b *Backend) flushPending() error {
	b.pmu.Lock()
	defer b.pmu.Unlock()
	return b.flushPendingLocked()
}

// flushPendingLocked is flushPending under pmu.
func (b *Backend) flushPendingLocked() error {
	if len(b.pending) == 0 {
		return nil
	}
	var err error
	for _, w := range b.pending {
		if err = b.dv.upload(w.dst, b.pendData[w.off:w.off+w.n]); err != nil {
			break
		}
	}
	b.pending, b.pendData = b.pending[:0], b.pendData[:0]
	return err
}

// ReadHostWindow copies ref's window to dst once the queued work is done.
func (b *Backend) ReadHostWindow(ref alloc.BufRef, dst []byte) error {
	return b.ReadHostWindowThen(ref, dst, nil)
}

// ReadHostWindowThen is ReadHostWindow that runs then (when not nil, on the
// caller's goroutine) once the read is queued and before it waits for it:
// what then queues (a gated run: gate.go) comes after the read's copy, and
// the read finishes without waiting for it. A plain read (no polled reads,
// or one too large) reads first and runs then after.
func (b *Backend) ReadHostWindowThen(ref alloc.BufRef, dst []byte, then func()) error {
	if int64(len(dst)) != ref.Len {
		return fmt.Errorf("cuda: read of %d bytes from a window of %d", len(dst), ref.Len)
	}
	p, err := b.window(ref)
	if err != nil {
		return err
	}
	if pr := b.dv.poll; pr != nil && len(dst) > 0 && len(dst) <= pollSize {
		return b.readPolled(pr, p, dst, then)
	}
	if err := b.readPlain(p, dst); err != nil {
		return err
	}
	if then != nil {
		then()
	}
	return nil
}

// readPlain is the plain read: the owner queues the copy, synchronizes
// the stream and copies out.
func (b *Backend) readPlain(p uintptr, dst []byte) error {
	var t0 time.Time
	if b.trace != nil {
		t0 = time.Now()
		defer func() { b.trace.addPlain(time.Since(t0)) }()
	}
	return b.dv.t.do(func() error {
		var wc *[2]time.Duration
		if b.busy.on {
			wc = &[2]time.Duration{}
		}
		if err := b.dv.download(dst, p, wc); err != nil {
			return err
		}
		if wc != nil {
			b.busy.wait += wc[0]
			b.busy.copy += wc[1]
		}
		b.busyRead()
		return nil
	})
}

// readPolled is ReadHostWindow's polled read (readpoll.go) of the window
// at device address p; then, when set, runs between the queue and the
// wait. Its fallback (the poll past its limit) waits for the stream, or,
// while a gate is closed behind the read, for the event before the gate.
func (b *Backend) readPolled(pr *pollReader, p uintptr, dst []byte, then func()) error {
	var timed bool
	var t0, t1 time.Time
	if b.trace != nil {
		t0 = time.Now()
	}
	wait, cp, err := pr.read(dst, func(seq uint32) error {
		err := b.dv.t.do(func() error {
			if err := b.alive(); err != nil {
				return err
			}
			if err := b.dv.queuePolled(p, len(dst), seq); err != nil {
				return err
			}
			timed = b.busy.on
			b.busyPollQueued()
			return nil
		})
		if b.trace != nil {
			t1 = time.Now()
		}
		if err == nil && then != nil {
			then()
		}
		return err
	}, func() error {
		return b.dv.t.doNoPre(func() error {
			if ev := b.dv.gateEvent(); ev != 0 {
				return check("cuEventSynchronize", sys(b.dv.d.eventSynchronize, ev))
			}
			return b.dv.sync()
		})
	})
	if err != nil {
		return err
	}
	if timed {
		b.busy.pollWait.Add(int64(wait))
		b.busy.pollCopy.Add(int64(cp))
	}
	if b.trace != nil {
		b.trace.addPolled(t1.Sub(t0), wait, cp, wait >= pr.limit)
	}
	return nil
}

// Synchronize waits for every queued operation.
func (b *Backend) Synchronize() error { return b.dv.t.do(b.dv.sync) }

// Compute queues the nodes' kernels (or replays their captured graph) and
// returns without waiting for them.
func (b *Backend) Compute(ctx context.Context, nodes []*graph.Node) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.trace != nil {
		return b.computeTraced(nodes)
	}
	return b.dv.t.doRun(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		b.busyBefore()
		err := b.run(nodes)
		b.busyAfter()
		return err
	})
}

// computeTraced is Compute with its time stamps taken (MINFER_CUDA_TRACE).
func (b *Backend) computeTraced(nodes []*graph.Node) error {
	c := &computeTrace{call: time.Now()}
	err := b.dv.t.doRun(func() error {
		c.preStart, c.preEnd = b.trPreStart, time.Now()
		c.looked = c.preEnd
		if err := b.alive(); err != nil {
			return err
		}
		b.busyBefore()
		b.curTrace = c
		err := b.run(nodes)
		b.curTrace = nil
		b.busyAfter()
		c.end = time.Now()
		return err
	})
	if err == nil {
		b.trace.addCompute(c, time.Now())
	}
	return err
}

// Close frees every buffer, weight and captured graph and releases the
// context.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	bufs, weights := b.bufs, b.weights
	b.bufs, b.weights = map[alloc.BufID]devBuf{}, map[string]*weight{}
	b.wbytes = 0
	b.mu.Unlock()
	if b.trace != nil {
		b.trace.close()
	}
	// stop's request skips beforeRequest: a closed gate would block its
	// synchronize.
	b.dv.openGate()
	// No polled read may be copying out of the staging teardown frees.
	if pr := b.dv.poll; pr != nil {
		pr.mu.Lock()
		defer pr.mu.Unlock()
	}
	var first error
	b.dv.t.stop(func() {
		first = b.dv.sync()
		b.graphs.clear(b.dv)
		b.busy.destroy(b.dv)
		for _, buf := range bufs {
			if err := check("cuMemFree", sys(b.dv.d.memFree, buf.ptr)); err != nil && first == nil {
				first = err
			}
		}
		for _, w := range weights {
			if err := check("cuMemFree", sys(b.dv.d.memFree, w.ptr)); err != nil && first == nil {
				first = err
			}
		}
		b.dv.teardown()
	})
	return first
}

// errUnsupported marks a node the backend cannot run.
var errUnsupported = errors.New("cuda: unsupported node")
