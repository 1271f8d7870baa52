package offload

import (
	"fmt"
	"strings"

	"github.com/minfer/minfer/internal/units"
)

// Report is the OffloadReport: where a load actually put the blocks, with the
// weight bytes each backend measured registering. The loader fills it after
// verifying the plan against what was registered.
type Report struct {
	Plan       Plan   // the plan the load ran with
	Backend    string // the device backend, e.g. "CUDA0"; "" if none
	DeviceName string // the device as it names itself, e.g. "NVIDIA H200"
	// DeviceBytes and HostBytes are the weight bytes the device and CPU
	// backends registered (measured, not planned).
	DeviceBytes, HostBytes int64
	// HostWeights says how the CPU holds its weights: copied into memory
	// or mapped from the file, and why ("" when not said).
	HostWeights string
	// DeviceFree and DeviceTotal are the device's own memory answer
	// measured at the end of the load (weights and KV cache in place;
	// every process's use counted); 0 when the device cannot say.
	DeviceFree, DeviceTotal int64
	// Fallback is set when the load dropped to CPU-only, and says why (e.g.
	// no compute backend for the device, or a weight type the device backend
	// lacks). Every block is then on the CPU whatever Plan says, and the
	// report leads with the reason.
	Fallback string
	// Note is an optional line on how the plan was chosen (the fit's budget,
	// Resolve's clamp note).
	Note string
}

// String prints the report, e.g.
//
//	offload: 18/22 blocks on CUDA0 (NVIDIA H200)
//	  blocks 0–17 → CUDA0 (NVIDIA H200)
//	  blocks 18–21 → CPU
//	  output/embeddings → CPU
//	  weights: 3 456.2 MiB on CUDA0 (NVIDIA H200), 812.0 MiB on CPU
func (r Report) String() string {
	plan := r.Plan.clamped()
	device := r.deviceLabel()
	var b strings.Builder
	running := plan
	if r.Fallback != "" {
		// Lead with the reason: the user must never think blocks are on a
		// GPU when they are not.
		fmt.Fprintf(&b, "offload: FELL BACK TO CPU ONLY: %s\n", r.Fallback)
		fmt.Fprintf(&b, "  planned %s; running everything on CPU\n", placement(plan, device))
		running = Plan{NLayers: plan.NLayers}
	} else {
		fmt.Fprintf(&b, "offload: %s\n", placement(plan, device))
	}
	onDevice := running.DeviceBlocks()
	if onDevice > 0 {
		fmt.Fprintf(&b, "  %s → %s\n", BlockRange(0, onDevice-1), device)
	}
	if onDevice < running.NLayers {
		fmt.Fprintf(&b, "  %s → CPU\n", BlockRange(onDevice, running.NLayers-1))
	}
	if running.DeviceHoldsUnblocked() {
		fmt.Fprintf(&b, "  output/embeddings → %s\n", device)
	} else {
		b.WriteString("  output/embeddings → CPU\n")
	}
	fmt.Fprintf(&b, "  weights: %s on %s, %s on CPU\n", formatBytes(r.DeviceBytes), device, formatBytes(r.HostBytes))
	if r.HostWeights != "" {
		fmt.Fprintf(&b, "  CPU weights: %s\n", r.HostWeights)
	}
	if r.DeviceTotal > 0 && r.Fallback == "" {
		fmt.Fprintf(&b, "  device memory after the load: %s in use of %s (measured by the device)\n",
			formatBytes(r.DeviceTotal-r.DeviceFree), formatBytes(r.DeviceTotal))
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "  note: %s\n", r.Note)
	}
	return b.String()
}

// Where is the one-line answer for a stats line: "22/22 blocks on CUDA
// NVIDIA H200", "11/22 blocks on CUDA NVIDIA H200, 11 on CPU", "22/22
// blocks + output on …", or, when nothing runs on a device, "22/22 blocks
// on CPU" (" (GPU fallback)" when a device was planned but not usable).
func (r Report) Where() string {
	plan := r.Plan.clamped()
	if r.Fallback != "" || plan.DeviceBlocks() == 0 && !plan.DeviceHoldsUnblocked() {
		s := fmt.Sprintf("%d/%d blocks on CPU", plan.NLayers, plan.NLayers)
		if r.Fallback != "" {
			s += " (GPU fallback)"
		}
		return s
	}
	device := r.Backend
	if device == "" {
		device = r.deviceLabel()
	}
	s := placement(plan, device)
	if n := plan.NLayers - plan.DeviceBlocks(); n > 0 {
		s += fmt.Sprintf(", %d on CPU", n)
	}
	return s
}

func (r Report) deviceLabel() string {
	switch {
	case r.Backend != "" && r.DeviceName != "":
		return r.Backend + " (" + r.DeviceName + ")"
	case r.Backend != "":
		return r.Backend
	case r.DeviceName != "":
		return r.DeviceName
	default:
		return "device"
	}
}

// placement is the one-line summary: "18/22 blocks on CUDA0 (NVIDIA H200)",
// "22/22 blocks + output on …".
func placement(p Plan, device string) string {
	s := fmt.Sprintf("%d/%d blocks", p.DeviceBlocks(), p.NLayers)
	if p.DeviceHoldsUnblocked() {
		s += " + output"
	}
	return s + " on " + device
}

// BlockRange names blocks first..last ("block 3", "blocks 0–17").
func BlockRange(first, last int) string {
	if first == last {
		return fmt.Sprintf("block %d", first)
	}
	return fmt.Sprintf("blocks %d–%d", first, last)
}

// formatBytes prints a measured size readably: bytes, KiB below a MiB, then
// MiB with one decimal and grouped thousands (the unit budgets are given in).
func formatBytes(n int64) string {
	const kib, mib = 1 << 10, 1 << 20
	switch {
	case n < kib:
		return fmt.Sprintf("%d B", n)
	case n < mib:
		return fmt.Sprintf("%.1f KiB", float64(n)/kib)
	default:
		whole, tenth := n/mib, (n%mib*10+mib/2)/mib // rounded to 0.1 MiB without overflowing
		if tenth == 10 {
			whole, tenth = whole+1, 0
		}
		return fmt.Sprintf("%s.%d MiB", units.Group(whole, " "), tenth)
	}
}
