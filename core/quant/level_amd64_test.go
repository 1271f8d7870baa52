//go:build !noasm

package quant

import (
	"slices"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestAVX2OfferedWhenPresent: a default amd64 build offers (and starts at)
// the AVX2 level exactly when the CPU has AVX2, FMA and F16C, whatever
// GOAMD64 the binary was built for.
func TestAVX2OfferedWhenPresent(t *testing.T) {
	has := cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C
	if got := slices.Contains(Levels(), AVX2); got != has {
		t.Fatalf("AVX2 offered %v, CPU has it %v", got, has)
	}
	if has && CurrentLevel() != AVX2 {
		t.Errorf("default level %s on an AVX2 CPU", CurrentLevel())
	}
}
