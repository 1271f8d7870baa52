package cpu

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestForRaisesAWorkersPanicOnTheCaller: a chunk that panics on a pool
// goroutine (a fault on a truncated mapping, with SetPanicOnFault) is raised
// again on For's caller once every chunk is done, where the session's
// recover can turn it into an error, instead of ending the process.
func TestForRaisesAWorkersPanicOnTheCaller(t *testing.T) {
	w := newWorkers(4)
	defer w.close()
	for _, bad := range []int{0, 3} { // the caller's chunk, a worker's chunk
		done := make([]bool, 4)
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Errorf("chunk %d: recovered %v, want boom", bad, r)
				}
			}()
			w.For(4, 1, func(lo, hi int) {
				done[lo] = true
				if lo == bad {
					panic("boom")
				}
			})
			t.Errorf("chunk %d: For returned normally", bad)
		}()
		for i, d := range done {
			if !d {
				t.Errorf("chunk %d panicked, chunk %d never ran", bad, i)
			}
		}
	}
	// The pool still works afterwards.
	sum := make([]int, 4)
	w.For(4, 1, func(lo, hi int) { sum[lo] = lo })
	if sum[3] != 3 {
		t.Errorf("pool broken after a panic: %v", sum)
	}
}

// TestRunGuidedCoversEachItemOnce: guided chunks cover [0, total) exactly
// once, every chunk starting on a multiple of unit, at least unit long but
// for the last, and never longer than a thread's share of what was left;
// for several thread counts, totals and units, and run again after.
func TestRunGuidedCoversEachItemOnce(t *testing.T) {
	for _, n := range []int{2, 3, 4} {
		w := newWorkers(n)
		for _, total := range []int{1, 15, 16, 17, 256, 2048, 5632, 32000} {
			for _, unit := range []int{1, 8, 16} {
				seen := make([]int32, total)
				var chunks [][2]int
				var mu sync.Mutex
				w.runGuided(total, unit, funcTask(func(lo, hi int) {
					mu.Lock()
					chunks = append(chunks, [2]int{lo, hi})
					mu.Unlock()
					for i := lo; i < hi; i++ {
						atomic.AddInt32(&seen[i], 1)
					}
				}))
				for i, c := range seen {
					if c != 1 {
						t.Fatalf("%d threads, total %d, unit %d: item %d ran %d times", n, total, unit, i, c)
					}
				}
				for _, c := range chunks {
					lo, hi := c[0], c[1]
					if lo%unit != 0 || (hi-lo < unit && hi != total) || (total > unit && hi-lo > max(unit, (total-lo)/n)) {
						t.Fatalf("%d threads, total %d, unit %d: chunk [%d, %d)", n, total, unit, lo, hi)
					}
				}
			}
		}
		w.close()
	}
}
