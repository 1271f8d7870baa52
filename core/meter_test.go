package core

import (
	"math"
	"sort"
	"testing"
	"time"
	"unsafe"

	"github.com/minfer/minfer/core/quant"
)

// TestReadMeterReadsTheWholeBufferEveryWay: each of the bandwidth meter's
// reads adds up exactly every thread's part (ReadSum's sum for the wide
// read; the float sum, exact for the buffer's small integers, for the
// others), the parts are equal and disjoint and cover all but less than
// one call a thread, and each read reports a finite positive rate.
func TestReadMeterReadsTheWholeBufferEveryWay(t *testing.T) {
	m := newReadMeter(3 << 20)
	defer m.free()
	for _, threads := range []int{1, 2, 3} {
		for _, w := range m.ways {
			how := w.kind
			var want uint64
			var covered int
			for th := 0; th < threads; th++ {
				p := m.part(threads, th, how)
				if off := int(uintptr(unsafe.Pointer(unsafe.SliceData(p))) - uintptr(unsafe.Pointer(unsafe.SliceData(m.buf)))); off != covered {
					t.Fatalf("threads %d read %d: part %d starts at %d, want %d", threads, how, th, off, covered)
				}
				covered += len(p)
				if how == meterWide {
					want += quant.ReadSumAt(w.lvl, p)
				} else {
					var s float32
					for _, v := range unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(p))), len(p)/4) {
						s += v
					}
					want += uint64(s)
				}
			}
			if len(m.buf)-covered >= threads*meterWideSpan {
				t.Errorf("threads %d read %d: parts cover %d of %d bytes", threads, how, covered, len(m.buf))
			}
			gbs, sum := m.read(threads, w)
			if sum != want || !(gbs > 0) || math.IsInf(gbs, 0) {
				t.Errorf("threads %d read %d: sum %v (want %v), %v GB/s", threads, how, sum, want, gbs)
			}
		}
	}
	if g := m.best(2, 1); !(g > 0) {
		t.Errorf("best: %v GB/s", g)
	}
	if want := len(quant.ReadSumLevels()) + 2; len(m.ways) != want {
		t.Errorf("%d ways, want %d (a wide read a ReadSum level, plain, prefetch)", len(m.ways), want)
	}
}

// BenchmarkReadMeter: the meter's reads of a 256 MiB buffer by two
// goroutines, alternating round by round (30 rounds), each timed as the
// meter times it (from when every thread has started) and, for the plain
// read, also from before the goroutines are started, as the meter timed
// it until session 16 ("plain-spawn"), and both of these again after 5 ms
// of sleep ("-idle"), so that the machine's other CPUs have gone idle as
// they do between a bench run's decode and its meter sample. Logs each
// one's median and best GB/s; b.N is ignored: run with -benchtime 1x.
func BenchmarkReadMeter(b *testing.B) {
	m := newReadMeter(256 << 20)
	defer m.free()
	var names []string
	for _, w := range m.ways {
		names = append(names, [...]string{"wide-" + w.lvl.String(), "plain", "prefetch"}[w.kind])
	}
	names = append(names, "plain-spawn", "plain-idle", "plain-spawn-idle")
	nw := len(m.ways)
	gbs := make([][]float64, len(names))
	n := 0
	for th := 0; th < 2; th++ {
		n += len(m.part(2, th, meterPlain))
	}
	spawn := func() float64 {
		t0 := time.Now()
		m.read(2, meterWay{kind: meterPlain})
		return float64(n) / time.Since(t0).Seconds() / 1e9
	}
	for b.Loop() {
		for round := 0; round < 30; round++ {
			for i, w := range m.ways {
				g, _ := m.read(2, w)
				gbs[i] = append(gbs[i], g)
			}
			gbs[nw] = append(gbs[nw], spawn())
			time.Sleep(5 * time.Millisecond)
			g, _ := m.read(2, meterWay{kind: meterPlain})
			gbs[nw+1] = append(gbs[nw+1], g)
			time.Sleep(5 * time.Millisecond)
			gbs[nw+2] = append(gbs[nw+2], spawn())
		}
	}
	for i, g := range gbs {
		sort.Float64s(g)
		b.Logf("%-12s median %6.2f GB/s  best %6.2f  (%d rounds)", names[i], g[len(g)/2], g[len(g)-1], len(g))
	}
}
