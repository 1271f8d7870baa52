package alloc

import (
	"fmt"

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

// Usable is the three-quarters rule, the one place it is written: the part
// of a memory answer Minfer may plan to fill, with a quarter held back for
// what is not known at plan time (KV arenas, the activation pool, the
// driver's own allocations). Every budget — the device gate, the offload
// fit (offload.WeightBudget) and the host gate (HostBudget) — is computed
// here, so they always talk about the same number (docs/memory-policy.md).
//
// It is free − free/4, not free*3/4, so it cannot overflow and every caller
// rounds identically: the held-back quarter rounds down, the usable part up.
func Usable(free uint64) uint64 {
	return free - free/4
}

// BudgetDecision maps a device's memory answer to its budget (pure). The
// device gate uses it as is; offload.WeightBudget takes its bytes and
// source for the automatic fit.
//   - Reported: Usable(Free); a measured zero refuses everything.
//   - QueryFailed: not a zero budget: no limit, weights still charged, and
//     the real device error is carried to be printed once.
//   - NoDevice (or no answer at all): nothing can be placed on it: 0 bytes.
func BudgetDecision(dm devices.DeviceMemory) Budget {
	switch d := dm.(type) {
	case devices.Reported:
		// Metal's answer is its recommended working set, not free bytes.
		what := "free"
		if d.Kind == devices.KindMetal {
			what = "working set"
		}
		name := d.Name
		if name == "" {
			name = d.Label()
		}
		return Limit(int64(Usable(d.Free)), fmt.Sprintf("¾ of %s %s on %s", units.MiB(d.Free), what, name))
	case devices.QueryFailed:
		return Budget{Source: "device query failed", Warning: fmt.Sprintf("device memory query failed (%v): no budget enforced, weights still charged", d.Err)}
	case devices.NoDevice:
		if d.Reason != "" {
			return Limit(0, fmt.Sprintf("no device (%s): fits nothing", d.Reason))
		}
	}
	return Limit(0, "no device: fits nothing")
}

// HostBudget is the CPU backend's budget: the weights it maps (they are
// mapped, not copied, so they are charged but cost no anonymous memory)
// plus Usable of the host's available memory. When the host's answer is
// missing (err, or nothing available) there is no limit: the CPU cannot be
// refused on a number nobody measured.
func HostBudget(mappedWeights int64, hm devices.HostMem, err error) Budget {
	if err != nil || hm.Available == 0 {
		return Unlimited("host memory unknown")
	}
	return Limit(mappedWeights+int64(Usable(hm.Available)),
		fmt.Sprintf("mapped weights + ¾ of %s available host memory", units.MiB(hm.Available)))
}

// MiB formats bytes as whole MiB, rounded up so a non-zero amount never
// prints as 0.
func MiB(b int64) string { return units.MiB(uint64(max(b, 0))) }
