package cpu

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// task is a unit of parallel work: run does items [lo, hi) on the given
// worker (0 is the calling goroutine), so tasks can keep per-worker
// scratch. Tasks are long-lived values owned by the CPU backend; passing a
// pointer as a task allocates nothing.
type task interface {
	run(worker, lo, hi int)
}

// workers is a fixed pool: one goroutine per extra thread, started once.
// A call of run publishes the task and wakes the helpers; everyone, the
// caller included, then claims chunks of grain items from an atomic cursor
// until none are left, so a slow or descheduled thread (the machine may be
// shared) holds up at most one chunk. When the caller runs out of chunks it
// closes the call: helpers that have not joined by then skip it, so the
// caller waits only for helpers still finishing a chunk, never for one the
// OS has not scheduled yet. Idle helpers spin for spinFor before they park
// on their wake channel, so back-to-back calls (a decode step is hundreds
// of them) cost no channel operation.
type workers struct {
	n int

	// The current call, written by run before gen is bumped.
	t            task
	total, grain int
	// guided: chunks of a share of what is left (runGuided), not of grain.
	guided bool
	next   atomic.Int64 // next unclaimed item
	// state counts the helpers inside the current call (low 32 bits);
	// closedBit is set once the caller has stopped accepting them.
	state atomic.Int64
	gen   atomic.Uint64

	sleeping []atomic.Bool
	wake     []chan struct{}
	closed   atomic.Bool
	once     sync.Once
	mu       sync.Mutex // one run at a time
	fault    fault      // the current call's first panic
}

// fault carries the first panic of one call's chunks back to its caller.
// Weights are views of a mapped file: a read of a page the file no longer
// has (it was truncated on disk) faults, and with SetPanicOnFault that
// fault is a panic the session above turns into an error, but only on the
// goroutine it happens on. So helpers run with SetPanicOnFault, every chunk
// runs under catch, and run raises the first panic again on the calling
// goroutine once all chunks are done.
type fault struct {
	mu  sync.Mutex
	val any
}

// catch is deferred around a chunk.
func (f *fault) catch() {
	if r := recover(); r != nil {
		f.mu.Lock()
		if f.val == nil {
			f.val = r
		}
		f.mu.Unlock()
	}
}

// rethrow raises the caught panic, if any, and clears it.
func (f *fault) rethrow() {
	f.mu.Lock()
	v := f.val
	f.val = nil
	f.mu.Unlock()
	if v != nil {
		panic(v)
	}
}

// spinFor is how long an idle helper polls for the next call before it
// parks. A decode step's ops follow one another within microseconds; the
// gap between steps (sampling, the caller's work) is usually longer.
const spinFor = 100 * time.Microsecond

// yieldEvery+1 is how many polls a spinning thread makes between two
// runtime.Gosched calls (a power of two). A yield lets a goroutine waiting
// for a P run (more threads than GOMAXPROCS, a device backend's thread),
// but each one takes the scheduler's global lock: sixteen threads yielding
// every few hundred polls spent ~15 % of a 16-core machine's CPU time in
// runtime.lock2 (bench/results/2026-12-01-cudaglue).
const yieldEvery = 4095

func newWorkers(n int) *workers {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	w := &workers{n: n, sleeping: make([]atomic.Bool, n), wake: make([]chan struct{}, n)}
	w.state.Store(closedBit)
	for i := 1; i < n; i++ {
		w.wake[i] = make(chan struct{}, 1)
		go w.helper(i)
	}
	return w
}

func (w *workers) helper(id int) {
	debug.SetPanicOnFault(true)
	seen := w.gen.Load()
	for {
		g := w.wait(id, seen)
		if w.closed.Load() {
			return
		}
		seen = g
		for {
			s := w.state.Load()
			if s&closedBit != 0 {
				break
			}
			if w.state.CompareAndSwap(s, s+1) {
				w.claim(id)
				w.state.Add(-1)
				break
			}
		}
	}
}

const closedBit = 1 << 32

// wait returns once gen differs from seen: spinning first, then parked.
func (w *workers) wait(id int, seen uint64) uint64 {
	start := time.Now()
	for i := 0; ; i++ {
		if g := w.gen.Load(); g != seen {
			return g
		}
		if i&255 == 255 {
			if time.Since(start) > spinFor {
				break
			}
			if i&yieldEvery == yieldEvery {
				runtime.Gosched()
			}
		}
	}
	w.sleeping[id].Store(true)
	if g := w.gen.Load(); g != seen {
		if !w.sleeping[id].CompareAndSwap(true, false) {
			<-w.wake[id] // run saw us asleep and sent a wake-up: take it
		}
		return g
	}
	<-w.wake[id]
	return w.gen.Load()
}

// claim runs chunks of the current task until the cursor passes total.
func (w *workers) claim(id int) {
	g := int64(w.grain)
	if w.guided {
		total, n := int64(w.total), int64(w.n)
		for {
			lo := w.next.Load()
			if lo >= total {
				return
			}
			size := max(g, (total-lo)/n/g*g)
			if w.next.CompareAndSwap(lo, lo+size) {
				w.chunk(id, int(lo), int(min(lo+size, total)))
			}
		}
	}
	for {
		lo := w.next.Add(g) - g
		if lo >= int64(w.total) {
			return
		}
		w.chunk(id, int(lo), int(min(lo+g, int64(w.total))))
	}
}

// chunk runs one chunk; a panic is kept for the caller and the thread goes
// on with the next chunk, so every chunk runs.
func (w *workers) chunk(id, lo, hi int) {
	defer w.fault.catch()
	w.t.run(id, lo, hi)
}

// run does t over [0, total) in chunks of grain items and returns when all
// are done. With one thread, or work for one chunk, it runs inline.
func (w *workers) run(total, grain int, t task) { w.start(total, grain, false, t) }

// runGuided is run with guided chunks: each claim takes a thread's share
// of what is left (rounded down to a multiple of unit, at least unit), so
// the chunks start large (few stream restarts) and end small (the threads
// finish together). Chunks start on multiples of unit. For decode on the
// 2-core VM of session 12 this beat both four fixed chunks a thread and
// claims of half a share: 1.5–3 % faster decode
// (bench/results/2026-12-02-s12-cpu-guided).
func (w *workers) runGuided(total, unit int, t task) { w.start(total, unit, true, t) }

func (w *workers) start(total, grain int, guided bool, t task) {
	if total <= 0 {
		return
	}
	grain = max(grain, 1)
	if w.n == 1 || total <= grain {
		t.run(0, 0, total)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock() // deferred first: runs after a rethrown panic too
	w.t, w.total, w.grain, w.guided = t, total, grain, guided
	w.next.Store(0)
	w.state.Store(0)
	w.gen.Add(1)
	for i := 1; i < w.n; i++ {
		if w.sleeping[i].CompareAndSwap(true, false) {
			w.wake[i] <- struct{}{}
		}
	}
	w.claim(0)
	w.state.Or(closedBit)
	for i := 0; w.state.Load() != closedBit; i++ {
		if i&yieldEvery == yieldEvery {
			runtime.Gosched()
		}
	}
	w.t = nil
	w.fault.rethrow()
}

func (w *workers) close() {
	w.once.Do(func() {
		w.closed.Store(true)
		w.gen.Add(1)
		for i := 1; i < w.n; i++ {
			if w.sleeping[i].CompareAndSwap(true, false) {
				w.wake[i] <- struct{}{}
			}
		}
	})
}

// funcTask adapts a closure for callers off the per-token path.
type funcTask func(lo, hi int)

func (f funcTask) run(_, lo, hi int) { f(lo, hi) }

// For runs fn over [0, total) in chunks of at least grain items, and
// waits. It allocates the closure; hot paths use run with a task value.
func (w *workers) For(total, grain int, fn func(lo, hi int)) {
	w.run(total, max(grain, (total+w.n-1)/w.n), funcTask(fn))
}

// scratch is one worker's reusable buffers, grown on demand.
type scratch struct {
	cs, scores, qh []float32
	// csKey: what cs was computed for (rope), when csOK.
	csKey   ropeKey
	csOK    bool
	grp     []float32 // grouped attention: the heads' 1/sum
	wts     []float32 // attention weights rounded to F16
	acc     []float64
	accs    []dotF16Acc
	vT      []float32
	dot4    [4]float32
	dot8    [8]float32
	dotG    [16]float32 // a group's results (oneToken)
	tileOut []float32   // four rows' results against every tile
	prep    []byte      // four weight rows prepared for the tile kernel
	rows    []byte      // x8 weight rows in the file layout (x8.go)
	_       [64]byte    // keep workers' scratch headers on separate cache lines
}

// scratchFor is worker w's scratch; each worker touches only its own.
func (c *CPU) scratchFor(w int) *scratch { return &c.ws[w] }

func (s *scratch) f32(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	return (*buf)[:n]
}

func (s *scratch) f64(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	return (*buf)[:n]
}
