package core

import (
	"math"
	"testing"
)

// TestReadMeterReadsTheWholeBufferBothWays: the plain and the prefetching
// read of the bandwidth meter each add up exactly the floats of every
// thread's part (small integers: the float sums are exact), and report a
// finite positive rate.
func TestReadMeterReadsTheWholeBufferBothWays(t *testing.T) {
	m := newReadMeter(3 << 20)
	defer m.free()
	for _, threads := range []int{1, 2, 3} {
		chunk := len(m.buf) / threads / meterSpan * meterSpan
		var want float32
		for _, v := range m.buf[:threads*chunk] {
			want += v
		}
		for _, pf := range []bool{false, true} {
			gbs, sum := m.read(threads, pf)
			if sum != want || !(gbs > 0) || math.IsInf(gbs, 0) {
				t.Errorf("threads %d prefetch %v: sum %v (want %v), %v GB/s", threads, pf, sum, want, gbs)
			}
		}
	}
	if g := m.best(2, 1); !(g > 0) {
		t.Errorf("best: %v GB/s", g)
	}
}
