package alloc

import (
	"errors"
	"fmt"

	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/internal/units"
)

// Budget is the limit a backend's gate checks against.
type Budget struct {
	Limited bool
	Bytes   int64
	// Warning is set when the decision carries a message to print once
	// (a failed device query).
	Warning string
	// Source says where the number came from, for reports.
	Source string
}

// Unlimited is the CPU's default budget and the failed-query decision.
func Unlimited(source string) Budget { return Budget{Source: source} }

// Limit is a fixed budget in bytes.
func Limit(bytes int64, source string) Budget {
	return Budget{Limited: true, Bytes: max(bytes, 0), Source: source}
}

func (b Budget) String() string {
	if !b.Limited {
		return "unlimited (" + b.Source + ")"
	}
	return fmt.Sprintf("%s (%s)", MiB(b.Bytes), b.Source)
}

// BudgetDecision maps a device's memory answer to the device gate's budget
// (pure). The number is offload.WeightBudget's, the one budget decision, so
// the gate and the automatic fit always talk about the same bytes:
//   - Reported: three quarters of Free (offload.Usable); a measured zero
//     refuses everything.
//   - QueryFailed: not a zero budget: no limit, weights still charged, and
//     the real device error is carried to be printed once.
//   - NoDevice (or no answer at all): nothing can be placed on it: 0 bytes.
func BudgetDecision(dm devices.DeviceMemory) Budget {
	b, err := offload.WeightBudget(dm, nil)
	if err != nil {
		// With no environment the only error is a failed device query.
		var q *offload.DeviceQueryError
		if errors.As(err, &q) {
			err = q.Err
		}
		return Budget{Source: "device query failed", Warning: fmt.Sprintf("device memory query failed (%v): no budget enforced, weights still charged", err)}
	}
	return Limit(int64(b.Bytes), b.Source)
}

// HostBudget is the CPU backend's budget: the weights it maps (they are
// mapped, not copied, so they are charged but cost no anonymous memory)
// plus three quarters of the host's available memory (offload.Usable). When the host's answer is
// missing (err, or nothing available) there is no limit: the CPU cannot be
// refused on a number nobody measured.
//
// Weights the CPU copies into memory of its own (core.Load's choice) are
// not mapped: the caller passes 0, and the copies are charged against the
// three quarters like any other buffer.
func HostBudget(mappedWeights int64, hm devices.HostMem, err error) Budget {
	if err != nil || hm.Available == 0 {
		return Unlimited("host memory unknown")
	}
	if mappedWeights == 0 {
		return Limit(int64(offload.Usable(hm.Available)), fmt.Sprintf("¾ of %s available host memory (%s)", units.MiB(hm.Available), hm.Source))
	}
	return Limit(mappedWeights+int64(offload.Usable(hm.Available)),
		fmt.Sprintf("mapped weights + ¾ of %s available host memory (%s)", units.MiB(hm.Available), hm.Source))
}

// MiB formats bytes as whole MiB, rounded up so a non-zero amount never
// prints as 0.
func MiB(b int64) string { return units.MiB(uint64(max(b, 0))) }
