//go:build !noasm

package quant

import (
	"slices"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestAVX2OfferedWhenPresent: a default amd64 build offers (and starts at)
// the AVX2 level exactly when the CPU has AVX2, FMA and F16C, whatever
// GOAMD64 the binary was built for (unless AVX512 is there, or
// MINFER_CPU_LEVEL names another level).
func TestAVX2OfferedWhenPresent(t *testing.T) {
	has := cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C
	if got := slices.Contains(Levels(), AVX2); got != has {
		t.Fatalf("AVX2 offered %v, CPU has it %v", got, has)
	}
	if has && !hasAVX512() && envLevel < 0 && CurrentLevel() != AVX2 {
		t.Errorf("default level %s on an AVX2 CPU", CurrentLevel())
	}
}

// TestAVX512OfferedWhenPresent: the AVX512 level is offered (and is the
// default) exactly when the CPU has AVX-512 F, BW, VL and VNNI besides
// AVX2, FMA and F16C. On a CPU without them the AVX512 twins cannot run:
// the test says so and skips instead of passing.
func TestAVX512OfferedWhenPresent(t *testing.T) {
	has := hasAVX512()
	if got := slices.Contains(Levels(), AVX512); got != has {
		t.Fatalf("AVX512 offered %v, CPU has it %v", got, has)
	}
	if !has {
		t.Skipf("this CPU lacks AVX-512 F/BW/VL/VNNI (avx512f %v bw %v vl %v vnni %v): levels %v, the AVX512 kernels are not tested here",
			cpu.X86.HasAVX512F, cpu.X86.HasAVX512BW, cpu.X86.HasAVX512VL, cpu.X86.HasAVX512VNNI, Levels())
	}
	if envLevel < 0 && CurrentLevel() != AVX512 {
		t.Errorf("default level %s on an AVX-512 VNNI CPU", CurrentLevel())
	}
	t.Logf("levels %v, default %s", Levels(), CurrentLevel())
}
