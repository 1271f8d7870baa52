package cuda

import (
	"runtime"
	"sync"
)

// thread is the one OS thread that owns a CUDA context. The driver binds a
// context to the calling OS thread; Go moves goroutines between threads, so
// every driver call of a backend runs on one goroutine locked to its thread
// (runtime.LockOSThread), and other goroutines send it work (do). A request
// is a whole operation (a Compute run, a copy), not a single driver call,
// so the hand-off costs once per run.
type thread struct {
	mu   sync.Mutex // one request at a time
	reqs chan func()
	res  chan error
	quit chan struct{}
	// pre, when set, runs on the owner before each request's work; its
	// error is the request's (the backend's deferred input writes).
	pre func() error
}

// startThread starts the owner goroutine and runs init on it.
func startThread(init func() error) (*thread, error) {
	t := &thread{reqs: make(chan func()), res: make(chan error, 1), quit: make(chan struct{})}
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
			select {
			case f := <-t.reqs:
				f()
			case <-t.quit:
				return
			}
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return t, nil
}

// do runs f on the owner thread and returns its error.
func (t *thread) do(f func() error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reqs <- func() {
		if t.pre != nil {
			if err := t.pre(); err != nil {
				t.res <- err
				return
			}
		}
		t.res <- f()
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
