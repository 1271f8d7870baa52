//go:build !noasm

package quant

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// TestX8PrefetchByMachine: the x8 kernels' prefetch distances are the
// measured ones of each machine kind (Intel; AMD with AVX-512, session 9's
// Zen 5, and session 15's for Q8_0: none; AMD without, session 11's Zen 3), whole groups ahead, and this
// machine runs its own kind's.
func TestX8PrefetchByMachine(t *testing.T) {
	for _, c := range []struct {
		intel, avx512 bool
		q4, q8        int
	}{
		{true, true, 2304, 2176},
		{true, false, 2304, 2176},
		{false, true, 4608, 0},
		{false, false, 1728, 1088},
	} {
		q4, q8 := x8Prefetch(c.intel, c.avx512)
		if q4 != c.q4 || q8 != c.q8 || q4%bytesQ4x8 != 0 || q8%bytesQ80x8 != 0 {
			t.Errorf("x8Prefetch(intel %v, avx512 %v) = %d, %d; want %d, %d", c.intel, c.avx512, q4, q8, c.q4, c.q8)
		}
	}
	q4, q8 := x8Prefetch(cpuIsIntel(), cpu.X86.HasAVX512F)
	if x8PrefetchQ4_0 != q4 || x8PrefetchQ8_0 != q8 {
		t.Errorf("this machine prefetches %d, %d; its kind's distances are %d, %d", x8PrefetchQ4_0, x8PrefetchQ8_0, q4, q8)
	}
}
