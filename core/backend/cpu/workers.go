package cpu

import (
	"runtime"
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
	wg     *sync.WaitGroup
}

func newWorkers(n int) *workers {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	w := &workers{n: n, jobs: make(chan job)}
	for i := 1; i < n; i++ {
		go func() {
			for j := range w.jobs {
				j.fn(j.lo, j.hi)
				j.wg.Done()
			}
		}()
	}
	return w
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
	var wg sync.WaitGroup
	chunk := (total + parts - 1) / parts
	wg.Add(parts - 1)
	for p := 1; p < parts; p++ {
		lo := p * chunk
		hi := min(lo+chunk, total)
		if lo >= hi {
			wg.Done()
			continue
		}
		w.jobs <- job{fn, lo, hi, &wg}
	}
	fn(0, min(chunk, total))
	wg.Wait()
}

func (w *workers) close() {
	w.once.Do(func() { close(w.jobs) })
}
