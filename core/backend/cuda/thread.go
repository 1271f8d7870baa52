package cuda

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// thread is the one OS thread that owns a CUDA context. The driver binds a
// context to the calling OS thread; Go moves goroutines between threads, so
// every driver call of a backend runs on one goroutine locked to its thread
// (runtime.LockOSThread), and other goroutines send it work (do). A request
// is a whole operation (a Compute run, a copy), not a single driver call,
// so the hand-off costs once per run.
//
// The hand-off itself: a goroutine parked on a channel is woken through the
// scheduler, and the owner, locked to its thread, through a futex as well —
// 10–30 µs each way on Linux, a decode step's host time twice over. So the
// owner, idle, and the caller, waiting for its result, first spin on an
// atomic word (spin: up to 200 µs by default) and park only after that;
// the owner keeps spinning as long as hold says more work is due soon (a
// caller is polling a read: readpoll.go). Spinning takes a core from
// whatever else the process runs, so it is on only where GOMAXPROCS is 4 or
// more (with two, two spinners took milliseconds a hand-off).
// MINFER_CUDA_SPIN=0 turns it off (every hand-off parks), for comparisons;
// MINFER_CUDA_SPIN=N sets the window to N µs.
type thread struct {
	mu sync.Mutex // one request at a time
	// The request being handed over: set by do (under mu) before req is
	// raised, read by the owner once it sees req; err is its result, set
	// by the owner before it raises res.
	f     func() error
	noPre bool // stop's request (and doNoPre's): pre does not run
	exit  bool // stop's request: the owner returns after it
	err   error
	req   signal
	res   signal
	// stopped: stop has run (under mu); later requests fail with ErrClosed.
	stopped bool
	// spin is the window either side spins for before parking (0: none).
	spin time.Duration
	// hold, when set, runs on the owner while it spins idle: true keeps it
	// spinning (up to maxHold).
	hold func() bool
	// pre, when set, runs on the owner before each request's work; its
	// error is the request's (the backend's deferred input writes).
	pre func() error
	// runReq: the request being handed over takes the deferred input
	// writes itself (doRun: a Compute); pre reads it.
	runReq bool
}

const (
	defaultSpin = 200 * time.Microsecond
	// maxHold bounds how long hold keeps an idle owner spinning.
	maxHold = 10 * time.Millisecond
	// spinCheck: the spin loops look at the clock (and the caller yields)
	// once every spinCheck loads of the word.
	spinCheck = 64
)

// spinFromEnv is the spin window: defaultSpin, MINFER_CUDA_SPIN µs, and 0
// (off) with MINFER_CUDA_SPIN=0 or where GOMAXPROCS is under 4.
func spinFromEnv() time.Duration {
	if runtime.GOMAXPROCS(0) < 4 {
		return 0
	}
	return parseSpin(os.Getenv("MINFER_CUDA_SPIN"))
}

func parseSpin(v string) time.Duration {
	if v == "" {
		return defaultSpin
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return defaultSpin
	}
	return time.Duration(n) * time.Microsecond
}

// startThread starts the owner goroutine and runs init on it; hold, when
// not nil, runs on the owner too (see thread.hold).
func startThread(init func() error, hold func() bool) (*thread, error) {
	return startThreadSpin(init, hold, spinFromEnv())
}

// startThreadSpin is startThread with the spin window given (tests force
// spinning, or parking, whatever GOMAXPROCS is).
func startThreadSpin(init func() error, hold func() bool, spin time.Duration) (*thread, error) {
	t := &thread{spin: spin, hold: hold}
	t.req.ch = make(chan struct{}, 1)
	t.res.ch = make(chan struct{}, 1)
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// The thread is never unlocked: it exits with the goroutine, so
		// the context binding dies with it.
		if err := init(); err != nil {
			started <- err
			return
		}
		started <- nil
		t.serve()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return t, nil
}

// serve runs the requests, one at a time, until stop's.
func (t *thread) serve() {
	for {
		// The owner spins without yielding: runtime.Gosched on a locked
		// goroutine hands its P away and puts the thread to sleep, the
		// very wake-up the spinning is to save.
		t.req.wait(t.spin, false, t.hold)
		f, noPre, exit := t.f, t.noPre, t.exit
		t.f = nil
		var err error
		if !noPre && t.pre != nil {
			err = t.pre()
		}
		if err == nil {
			err = f()
		}
		t.err = err
		t.res.raise()
		if exit {
			return
		}
	}
}

// do runs f on the owner thread and returns its error.
func (t *thread) do(f func() error) error { return t.request(f, false, false) }

// doNoPre is do without the pre step (a wait that must not open a gate or
// queue the deferred writes: readPolled's fallback).
func (t *thread) doNoPre(f func() error) error { return t.request(f, true, false) }

// doRun is do for a request that takes the deferred input writes itself
// (a Compute: they may ride in its graph, inputs.go); pre sees runReq set.
func (t *thread) doRun(f func() error) error { return t.request(f, false, true) }

func (t *thread) request(f func() error, noPre, run bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return ErrClosed
	}
	if run {
		t.runReq = true
		defer func() { t.runReq = false }()
	}
	return t.call(f, noPre, false)
}

// call hands one request to the owner and waits for its result (under mu).
func (t *thread) call(f func() error, noPre, exit bool) error {
	t.f, t.noPre, t.exit = f, noPre, exit
	t.req.raise()
	t.res.wait(t.spin, true, nil)
	err := t.err
	t.err = nil
	return err
}

// stop ends the owner goroutine (after fin, run on it).
func (t *thread) stop(fin func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.call(func() error { fin(); return nil }, true, true)
	t.stopped = true
}

// signal is a flag one side raises and the other waits for: spinning on
// the word first, then parked on the channel. raise stores the flag before
// it looks for a parked waiter, and a waiter marks itself parked before it
// looks at the flag a last time (sequentially consistent atomics), so at
// least one of them sees the other: no wake-up is lost. A token left over
// from a raise that found the waiter already up only makes a later wait
// look at the flag once more.
type signal struct {
	v      atomic.Uint32 // 1: raised
	parked atomic.Uint32 // 1: the waiter may be parked on ch
	ch     chan struct{} // capacity 1
}

func (s *signal) raise() {
	s.v.Store(1)
	if s.parked.Load() != 0 {
		select {
		case s.ch <- struct{}{}:
		default:
		}
	}
}

// wait returns once the signal is raised, and lowers it. It spins for up
// to spin first (yielding the processor now and then if yield), longer
// while hold says so.
func (s *signal) wait(spin time.Duration, yield bool, hold func() bool) {
	if spin > 0 && s.spinWait(spin, yield, hold) {
		return
	}
	s.parked.Store(1)
	for s.v.Load() == 0 {
		<-s.ch
	}
	s.parked.Store(0)
	s.v.Store(0)
}

func (s *signal) spinWait(spin time.Duration, yield bool, hold func() bool) bool {
	var first, start time.Time
	for i := 1; ; i++ {
		if s.v.Load() != 0 {
			s.v.Store(0)
			return true
		}
		if i%spinCheck != 0 {
			continue
		}
		if yield {
			runtime.Gosched()
		}
		now := time.Now()
		if first.IsZero() {
			first, start = now, now
			continue
		}
		if hold != nil && now.Sub(first) < maxHold && hold() {
			start = now
		}
		if now.Sub(start) > spin {
			return false
		}
	}
}
