package offload

import (
	"errors"
	"fmt"
	"math"

	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/internal/units"
)

// EnvGPUMem overrides the device's answer with a weight budget in MiB.
const EnvGPUMem = "MINFER_GPU_MEM"

// ErrDeviceQuery is the sentinel under a failed device-memory query. It
// refuses the automatic fit (there is no number to fit against) but is not a
// zero budget (docs/memory-policy.md): an explicit block count proceeds; see
// Request.BudgetRefusal.
var ErrDeviceQuery = errors.New("offload: device memory query failed")

// DeviceQueryError carries the device's real error (e.g. NVML's) under
// ErrDeviceQuery; errors.Is matches both.
type DeviceQueryError struct {
	Err error
}

func (e *DeviceQueryError) Error() string {
	if e.Err == nil {
		return "offload: device memory query failed (the device gave no error)"
	}
	return "offload: device memory query failed: " + e.Err.Error()
}

// Unwrap exposes both the sentinel and the device's own error.
func (e *DeviceQueryError) Unwrap() []error { return []error{ErrDeviceQuery, e.Err} }

// Budget is the weight budget the automatic fit packs blocks into, and how
// it was derived, for the plan view and the report.
type Budget struct {
	Bytes uint64
	// Source says where Bytes came from: "MINFER_GPU_MEM=4096 MiB",
	// "¾ of 10240 MiB free on NVIDIA H200", "no device: fits nothing".
	Source string
}

// String reads like "7680 MiB (¾ of 10240 MiB free on NVIDIA H200)".
func (b Budget) String() string {
	return fmt.Sprintf("%s (%s)", units.MiB(b.Bytes), b.Source)
}

// Usable is the three-quarters rule, the one place it is written: the part
// of a memory answer Minfer may plan to fill, with a quarter held back for
// what is not known at plan time (KV arenas, the activation pool, the
// driver's own allocations). The automatic fit (WeightBudget), the device
// gate (alloc.BudgetDecision) and the host gate (alloc.HostBudget) all take
// their number from it (docs/memory-policy.md).
//
// It is free − free/4, not free*3/4, so it cannot overflow and every caller
// rounds identically: the held-back quarter rounds down, the usable part up.
func Usable(free uint64) uint64 {
	return free - free/4
}

// WeightBudget is the one budget decision: the weight budget for the
// automatic fit, which the device gate (alloc.BudgetDecision) also takes,
// in this order:
//  1. MINFER_GPU_MEM=<MiB> (looked up through env; nil means no
//     environment), when set, is the budget whatever the device says; a
//     value that is not a whole number of MiB is a *RequestError quoting it
//     (wrapping ErrBadRequest) — a refused load, even for an explicit count;
//  2. a Reported device gives Usable(Free): three quarters of its answer;
//  3. NoDevice (or no answer at all) fits nothing: 0 bytes, not an error;
//  4. QueryFailed is a *DeviceQueryError naming the device's real error; it
//     refuses auto but not an explicit count (Request.BudgetRefusal decides).
func WeightBudget(dm devices.DeviceMemory, env func(string) (string, bool)) (Budget, error) {
	if env != nil {
		if raw, ok := env(EnvGPUMem); ok {
			return parseGPUMem(raw)
		}
	}
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
		return Budget{
			Bytes:  Usable(d.Free),
			Source: fmt.Sprintf("¾ of %s %s on %s", units.MiB(d.Free), what, name),
		}, nil
	case devices.QueryFailed:
		return Budget{}, &DeviceQueryError{Err: d.Err}
	case devices.NoDevice:
		if d.Reason != "" {
			return Budget{Source: fmt.Sprintf("no device (%s): fits nothing", d.Reason)}, nil
		}
	}
	return Budget{Source: "no device: fits nothing"}, nil
}

const gpuMemWant = "a size in MiB (use a whole number of MiB, e.g. 4096)"

func parseGPUMem(raw string) (Budget, error) {
	n, ok := parseDecimal(trimBlanks(raw))
	if !ok || uint64(n) > math.MaxUint64>>20 {
		return Budget{}, &RequestError{Source: EnvGPUMem, Value: raw, Want: gpuMemWant}
	}
	return Budget{Bytes: uint64(n) << 20, Source: fmt.Sprintf("%s=%d MiB", EnvGPUMem, n)}, nil
}
