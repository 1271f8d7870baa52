package alloc

import (
	"fmt"

	"github.com/minfer/minfer/core/budget"
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

// BudgetDecision maps a device's memory answer to the gate's budget (pure).
//   - Reported: free with a quarter held back; a measured zero refuses.
//   - QueryFailed: not a zero budget: no limit, weights still charged, and the
//     real device error is carried to be printed once (ADR-0016).
//   - NoDevice: nothing can be placed on it: budget 0.
func BudgetDecision(dm devices.DeviceMemory) Budget {
	switch d := dm.(type) {
	case devices.Reported:
		return Limit(int64(budget.Usable(d.Free)), fmt.Sprintf("¾ of %s free on %s", MiB(int64(d.Free)), d.Name))
	case devices.QueryFailed:
		return Budget{Source: "device query failed", Warning: fmt.Sprintf("device memory query failed (%v): no budget enforced, weights still charged", d.Err)}
	default:
		return Limit(0, "no device")
	}
}

// MiB formats bytes as whole MiB, rounded up so a non-zero amount never
// prints as 0.
func MiB(b int64) string { return units.MiB(uint64(max(b, 0))) }
