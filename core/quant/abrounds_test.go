package quant

import (
	"sort"
	"testing"
	"time"
)

// abVariant is one way of doing the same work, for abRounds.
type abVariant struct {
	name string
	run  func()
}

// abRounds times each variant for about 10 ms per round, the variants
// alternating round by round (30 rounds), and logs each one's median and
// best ns per call: on a shared VM whose speed drifts by tens of percent
// from second to second, the same window for every variant is what makes
// them comparable. b.N is ignored: run with -benchtime 1x.
func abRounds(b *testing.B, vs []abVariant) {
	const rounds = 30
	ns := make([][]float64, len(vs))
	calls := make([]int, len(vs))
	for i, v := range vs {
		t0 := time.Now()
		for calls[i] = 0; time.Since(t0) < 10*time.Millisecond; calls[i]++ {
			v.run()
		}
	}
	for rd := 0; rd < rounds; rd++ {
		for i, v := range vs {
			t0 := time.Now()
			for c := 0; c < calls[i]; c++ {
				v.run()
			}
			ns[i] = append(ns[i], float64(time.Since(t0).Nanoseconds())/float64(calls[i]))
		}
	}
	for i, v := range vs {
		s := append([]float64(nil), ns[i]...)
		sort.Float64s(s)
		b.Logf("%-12s median %9.1f ns  best %9.1f  (%d rounds)", v.name, s[len(s)/2], s[0], len(s))
	}
}
