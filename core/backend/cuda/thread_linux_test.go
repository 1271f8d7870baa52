//go:build linux

package cuda

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestThreadRunsRequestsInOrderOnOneOSThread: requests from several
// goroutines run one at a time, each caller's in its order, every one (and
// init, pre and stop's fin) on the one OS thread; pre's error is the
// request's and keeps its work from running; after stop a request fails
// with ErrClosed. In each hand-off mode: parked, spinning (forced on
// whatever GOMAXPROCS is), and a spin window so short that the waits keep
// falling back to parking.
func TestThreadRunsRequestsInOrderOnOneOSThread(t *testing.T) {
	for _, m := range []struct {
		name string
		spin time.Duration
	}{{"parked", 0}, {"spin", defaultSpin}, {"spinthenpark", time.Microsecond}} {
		t.Run(m.name, func(t *testing.T) {
			var tid int
			var holds atomic.Int64
			th, err := startThreadSpin(func() error { tid = syscall.Gettid(); return nil },
				func() bool { holds.Add(1); return false }, m.spin)
			if err != nil {
				t.Fatal(err)
			}
			if tid == 0 {
				t.Fatal("init did not run")
			}
			var (
				inside  atomic.Int32
				order   []int64 // caller<<32 | n, as run (owner only)
				badTid  atomic.Int32
				overlap atomic.Int32
				failPre atomic.Bool
				preRuns int
			)
			th.do(func() error {
				th.pre = func() error {
					preRuns++
					if syscall.Gettid() != tid {
						badTid.Add(1)
					}
					if failPre.Load() {
						return errors.New("pre failed")
					}
					return nil
				}
				return nil
			})
			const callers, each = 6, 300
			var wg sync.WaitGroup
			errs := make(chan error, callers)
			for c := 0; c < callers; c++ {
				wg.Add(1)
				go func(c int) {
					defer wg.Done()
					for n := 0; n < each; n++ {
						want := fmt.Errorf("request %d/%d", c, n)
						got := th.do(func() error {
							if inside.Add(1) != 1 {
								overlap.Add(1)
							}
							if syscall.Gettid() != tid {
								badTid.Add(1)
							}
							order = append(order, int64(c)<<32|int64(n))
							if n%7 == 0 {
								time.Sleep(10 * time.Microsecond) // some requests outlast a short spin
							}
							inside.Add(-1)
							return want
						})
						if got != want {
							errs <- fmt.Errorf("caller %d request %d: got %v", c, n, got)
							return
						}
					}
				}(c)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			failPre.Store(true)
			ran := false
			if err := th.do(func() error { ran = true; return nil }); err == nil || err.Error() != "pre failed" || ran {
				t.Errorf("with pre failing: error %v, work ran %v", err, ran)
			}
			failPre.Store(false)
			var finTid int
			preBefore := -1
			th.do(func() error { preBefore = preRuns; return nil })
			th.stop(func() { finTid = syscall.Gettid() })
			if finTid != tid {
				t.Errorf("fin ran on thread %d, not %d", finTid, tid)
			}
			if preRuns != preBefore {
				t.Errorf("pre ran for stop's request")
			}
			if err := th.do(func() error { return nil }); !errors.Is(err, ErrClosed) {
				t.Errorf("request after stop: %v, want ErrClosed", err)
			}
			th.stop(func() { t.Error("fin of a second stop ran") })
			if n := overlap.Load(); n != 0 {
				t.Errorf("%d requests overlapped another", n)
			}
			if n := badTid.Load(); n != 0 {
				t.Errorf("%d requests (or pre) ran on another OS thread than %d", n, tid)
			}
			if len(order) != callers*each {
				t.Fatalf("%d requests ran, want %d", len(order), callers*each)
			}
			next := make([]int64, callers)
			for _, o := range order {
				c, n := o>>32, o&(1<<32-1)
				if n != next[c] {
					t.Fatalf("caller %d: request %d ran when %d was due", c, n, next[c])
				}
				next[c]++
			}
			if m.spin >= defaultSpin && holds.Load() == 0 {
				t.Error("the idle owner spun without asking hold")
			}
		})
	}
}
