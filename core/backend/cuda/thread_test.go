package cuda

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestThreadHandOff: requests from many goroutines run one at a time on
// the owner, each caller gets its own request's error, whether the sides
// poll before parking (spin) or park at once, also when requests come
// after the owner has parked; stop runs its function and ends the owner.
func TestThreadHandOff(t *testing.T) {
	for _, spin := range []time.Duration{0, 200 * time.Microsecond} {
		t.Run(fmt.Sprint(spin), func(t *testing.T) {
			t.Setenv("MINFER_CUDA_SPIN", fmt.Sprint(spin.Microseconds()))
			owner := 0
			th, err := startThread(func() error { owner = 1; return nil })
			if err != nil {
				t.Fatal(err)
			}
			if th.spin != spin {
				t.Fatalf("spin %v, want %v", th.spin, spin)
			}
			var wg sync.WaitGroup
			var running, total int
			bad := errors.New("odd")
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 500; i++ {
						err := th.do(func() error {
							running++
							if running != 1 {
								return fmt.Errorf("%d requests at once", running)
							}
							total++
							running--
							if i%2 == 1 {
								return bad
							}
							return nil
						})
						if want := i%2 == 1; (err == bad) != want {
							t.Errorf("request %d: error %v", i, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			time.Sleep(2 * spin) // the owner parks
			if err := th.do(func() error { total++; return nil }); err != nil {
				t.Fatal(err)
			}
			fin := false
			th.stop(func() { fin = true })
			if !fin || owner != 1 || total != 2001 {
				t.Fatalf("fin %v, init %d, %d requests ran, want 2001", fin, owner, total)
			}
		})
	}
}
