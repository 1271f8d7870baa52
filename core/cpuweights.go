package core

import (
	"fmt"

	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/internal/units"
)

// EnvCPUWeights chooses how the CPU holds its weights when
// LoadOptions.CPUWeights is empty: auto, copy or map (cpuWeightsChoice).
const EnvCPUWeights = "MINFER_CPU_WEIGHTS"

// cpuWeightsChoice decides whether the CPU copies the weights it runs into
// memory of its own (huge pages on Linux: read about twice as fast as the
// file's page-cache mapping by the decode kernels, bench/results/
// 2026-12-01-s8-cpucopy) or uses them in place from the mapping. "map" and
// "copy" are what they say; "auto" (or "") copies when those weights take at
// most half of the host's available memory, so the copy never crowds out
// the KV cache or the rest of the machine, and maps them otherwise (a model
// larger than memory still runs, from the file). Copies are charged: the
// loader admits each through the host budget, which then counts no mapped
// weights. The reason is for the offload report.
func cpuWeightsChoice(mode string, cpuBytes int64, hm devices.HostMem, hmErr error) (copyW bool, reason string, err error) {
	switch mode {
	case "map":
		return false, "mapped from the file (as asked)", nil
	case "copy":
		return true, "copied into memory (as asked)", nil
	case "", "auto":
	default:
		return false, "", fmt.Errorf("core: CPU weights %q: want auto, copy or map", mode)
	}
	if hmErr != nil || hm.Available == 0 {
		return false, "mapped from the file (host memory unknown)", nil
	}
	if cpuBytes > int64(hm.Available/2) {
		return false, fmt.Sprintf("mapped from the file (%s would take more than half of the %s available)", units.MiB(uint64(cpuBytes)), units.MiB(hm.Available)), nil
	}
	return true, fmt.Sprintf("copied into memory (%s of %s available)", units.MiB(uint64(cpuBytes)), units.MiB(hm.Available)), nil
}
