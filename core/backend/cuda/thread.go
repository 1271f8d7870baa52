package cuda

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// thread is the one OS thread that owns a CUDA context. The driver binds a
// context to the calling OS thread; Go moves goroutines between threads, so
// every driver call of a backend runs on one goroutine locked to its thread
// (runtime.LockOSThread), and other goroutines send it work (do). A request
// is a whole operation (a Compute run, a copy), not a single driver call,
// so the hand-off costs once per run.
//
// A decode step makes several requests a few tens of microseconds apart
// (inputs, the run, the read of the logits). A hand-off to a parked
// goroutine costs ~25 µs on the H200 host (bench/results/2026-12-02-s9-call2:
// four input writes took 0.12 ms a step), so both sides poll for a while
// before they park: the owner for spin after each request, the caller for
// spin while its request runs.
type thread struct {
	mu   sync.Mutex  // one request at a time
	reqs chan func() // one slot: a send to a polling owner does not wait
	res  chan error
	quit chan struct{}
	spin time.Duration
}

// defaultSpin is how long each side polls before it parks.
const defaultSpin = time.Millisecond

// spinFromEnv is MINFER_CUDA_SPIN (microseconds; 0: park at once), or
// defaultSpin.
func spinFromEnv() time.Duration {
	if v, ok := os.LookupEnv("MINFER_CUDA_SPIN"); ok {
		if us, err := strconv.Atoi(v); err == nil && us >= 0 {
			return time.Duration(us) * time.Microsecond
		}
	}
	return defaultSpin
}

// startThread starts the owner goroutine and runs init on it.
func startThread(init func() error) (*thread, error) {
	t := &thread{reqs: make(chan func(), 1), res: make(chan error, 1), quit: make(chan struct{}), spin: spinFromEnv()}
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
		for {
			f := t.next()
			if f == nil {
				return
			}
			f()
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return t, nil
}

// next is the next request (polled for t.spin, then waited for), or nil
// once the thread is told to quit.
func (t *thread) next() func() {
	if t.spin > 0 {
		deadline := time.Now().Add(t.spin)
		for i := 1; ; i++ {
			select {
			case f := <-t.reqs:
				return f
			default:
			}
			if i%64 == 0 && time.Now().After(deadline) {
				break
			}
		}
	}
	select {
	case f := <-t.reqs:
		return f
	case <-t.quit:
		return nil
	}
}

// do runs f on the owner thread and returns its error.
func (t *thread) do(f func() error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reqs <- func() { t.res <- f() }
	if t.spin > 0 {
		deadline := time.Now().Add(t.spin)
		for i := 1; ; i++ {
			select {
			case err := <-t.res:
				return err
			default:
			}
			if i%64 == 0 && time.Now().After(deadline) {
				break
			}
		}
	}
	return <-t.res
}

// stop ends the owner goroutine (after fin, run on it).
func (t *thread) stop(fin func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	done := make(chan struct{})
	t.reqs <- func() { fin(); close(done) }
	<-done
	close(t.quit)
}
