package cpu

import (
	"math"
	"testing"
)

// TestExpfWithinTwoULP: ggml's polynomial exp stays within its documented
// ~1.5 ulp of the true value over the range softmax and SiLU use, and
// flushes to 0 and +Inf where ggml's does.
func TestExpfWithinTwoULP(t *testing.T) {
	worst := 0.0
	for x := float32(-103); x < 88; x += 0.0013 {
		got := float64(expf(x))
		want := math.Exp(float64(x))
		ulp := float64(math.Nextafter32(float32(want), float32(math.Inf(1))) - float32(want))
		if e := math.Abs(got-want) / ulp; e > worst {
			worst = e
		}
	}
	if worst > 2 {
		t.Errorf("worst error %.2f ulp", worst)
	}
	if expf(-200) != 0 || !math.IsInf(float64(expf(200)), 1) || expf(0) != 1 {
		t.Errorf("expf(-200)=%g expf(200)=%g expf(0)=%g", expf(-200), expf(200), expf(0))
	}
	if math.IsInf(float64(expf(float32(math.Inf(-1)))), 0) || expf(float32(math.Inf(-1))) != 0 {
		t.Errorf("expf(-Inf) = %g, want 0 (masked attention scores)", expf(float32(math.Inf(-1))))
	}
}

func TestWorkersCoverEveryIndexOnce(t *testing.T) {
	w := newWorkers(3)
	defer w.close()
	for _, total := range []int{0, 1, 2, 5, 17, 1000} {
		for _, grain := range []int{1, 4, 100} {
			seen := make([]int32, total)
			w.For(total, grain, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i]++
				}
			})
			for i, n := range seen {
				if n != 1 {
					t.Fatalf("total %d grain %d: index %d ran %d times", total, grain, i, n)
				}
			}
		}
	}
}
