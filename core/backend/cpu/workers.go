package cpu

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// workers is a fixed pool: one goroutine per extra thread, started once.
// A node's work is split into contiguous chunks; the calling goroutine
// takes a share too, so one thread means no goroutines at all.
type workers struct {
	n    int
	jobs chan job
	once sync.Once
}

type job struct {
	fn     func(lo, hi int)
	lo, hi int
	st     *forState
}

// forState is one For call's: its chunks' wait group and their fault.
type forState struct {
	wg sync.WaitGroup
	fault
}

// fault carries the first panic of one For's chunks back to its caller.
// Weights are views of a mapped file: a read of a page the file no longer
// has (it was truncated on disk) faults, and with SetPanicOnFault that
// fault is a panic the session above turns into an error, but only on the
// goroutine it happens on. So workers run with SetPanicOnFault, catch what
// a chunk raises, and For raises it again on the calling goroutine.
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

// rethrow raises the first caught panic on the caller, after every chunk
// has finished.
func (f *fault) rethrow() {
	if f.val != nil {
		panic(f.val)
	}
}

func newWorkers(n int) *workers {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	w := &workers{n: n, jobs: make(chan job)}
	for i := 1; i < n; i++ {
		go func() {
			debug.SetPanicOnFault(true)
			for j := range w.jobs {
				j.run()
			}
		}()
	}
	return w
}

func (j job) run() {
	defer j.st.wg.Done()
	defer j.st.catch()
	j.fn(j.lo, j.hi)
}

// For runs fn over [0, total) split into at most n chunks of at least grain
// items, and waits.
func (w *workers) For(total, grain int, fn func(lo, hi int)) {
	if total <= 0 {
		return
	}
	parts := w.n
	if grain < 1 {
		grain = 1
	}
	if total/grain < parts {
		parts = max(total/grain, 1)
	}
	if parts == 1 {
		fn(0, total)
		return
	}
	st := &forState{}
	chunk := (total + parts - 1) / parts
	st.wg.Add(parts - 1)
	for p := 1; p < parts; p++ {
		lo := p * chunk
		hi := min(lo+chunk, total)
		if lo >= hi {
			st.wg.Done()
			continue
		}
		w.jobs <- job{fn, lo, hi, st}
	}
	func() {
		defer st.catch()
		fn(0, min(chunk, total))
	}()
	st.wg.Wait()
	st.rethrow()
}

func (w *workers) close() {
	w.once.Do(func() { close(w.jobs) })
}
