//go:build !noasm

package quant

import (
	"slices"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestNEONOfferedWhenPresent: an arm64 build offers NEON on every CPU with
// Advanced SIMD, NEONDot exactly when the CPU has the dot-product
// extension, and starts at the best of them.
func TestNEONOfferedWhenPresent(t *testing.T) {
	if got, has := slices.Contains(Levels(), NEON), cpu.ARM64.HasASIMD && cpu.ARM64.HasFP; got != has {
		t.Fatalf("NEON offered %v, CPU has it %v", got, has)
	}
	hasDot := cpu.ARM64.HasASIMD && cpu.ARM64.HasFP && cpu.ARM64.HasASIMDDP
	if got := slices.Contains(Levels(), NEONDot); got != hasDot {
		t.Fatalf("NEONDot offered %v, CPU has it %v", got, hasDot)
	}
	want := NEON
	if hasDot {
		want = NEONDot
	}
	if CurrentLevel() != want {
		t.Errorf("default level %s, want %s", CurrentLevel(), want)
	}
}
