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
// best ns per call (alternateRounds): on a shared VM whose speed drifts by tens of percent
// from second to second, the same window for every variant is what makes
// them comparable. b.N is ignored: run with -benchtime 1x.
func abRounds(b *testing.B, vs []abVariant) {
	calls := make([]int, len(vs))
	for i, v := range vs {
		t0 := time.Now()
		for calls[i] = 0; time.Since(t0) < 10*time.Millisecond; calls[i]++ {
			v.run()
		}
	}
	ns := alternateRounds(len(vs), func(i int) float64 {
		t0 := time.Now()
		for c := 0; c < calls[i]; c++ {
			vs[i].run()
		}
		return float64(time.Since(t0).Nanoseconds()) / float64(calls[i])
	})
	for i, v := range vs {
		b.Logf("%-12s median %9.1f ns  best %9.1f  (%d rounds)", v.name, ns[i][len(ns[i])/2], ns[i][0], len(ns[i]))
	}
}

// abRoundsN is the rounds of alternateRounds.
const abRoundsN = 30

// alternateRounds runs measure(i) for each of n variants, the variants
// alternating round by round (abRoundsN rounds), and returns each
// variant's measurements sorted.
func alternateRounds(n int, measure func(i int) float64) [][]float64 {
	out := make([][]float64, n)
	for rd := 0; rd < abRoundsN; rd++ {
		for i := range out {
			out[i] = append(out[i], measure(i))
		}
	}
	for i := range out {
		sort.Float64s(out[i])
	}
	return out
}
