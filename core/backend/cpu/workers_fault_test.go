package cpu

import "testing"

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
