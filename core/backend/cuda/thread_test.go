package cuda

import (
	"testing"
	"time"
)

func TestParseSpin(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"": defaultSpin, "0": 0, "50": 50 * time.Microsecond, "2000": 2 * time.Millisecond, "x": defaultSpin, "-3": defaultSpin,
	} {
		if got := parseSpin(v); got != want {
			t.Errorf("parseSpin(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestSignalNoLostWakeup: a raise racing a waiter's switch from spinning to
// parking always wakes it (many rounds, both sides at once).
func TestSignalNoLostWakeup(t *testing.T) {
	for _, spin := range []time.Duration{0, time.Nanosecond, time.Microsecond, 50 * time.Microsecond} {
		var a, b signal
		a.ch, b.ch = make(chan struct{}, 1), make(chan struct{}, 1)
		const rounds = 5000
		done := make(chan struct{})
		go func() {
			for i := 0; i < rounds; i++ {
				a.wait(spin, false, nil)
				b.raise()
			}
			close(done)
		}()
		for i := 0; i < rounds; i++ {
			a.raise()
			b.wait(spin, true, nil)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("spin %v: ping-pong stuck", spin)
		}
	}
}

// BenchmarkThreadDo is one empty request's round trip, parked and
// spinning (spinning needs a core for each side: on fewer than four it is
// off outside this benchmark).
func BenchmarkThreadDo(b *testing.B) {
	for _, m := range []struct {
		name string
		spin time.Duration
	}{{"parked", 0}, {"spin", defaultSpin}} {
		b.Run(m.name, func(b *testing.B) {
			th, err := startThreadSpin(func() error { return nil }, nil, m.spin)
			if err != nil {
				b.Fatal(err)
			}
			defer th.stop(func() {})
			f := func() error { return nil }
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				th.do(f)
			}
		})
	}
}
