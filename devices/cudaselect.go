package devices

import (
	"fmt"
	"strconv"
	"strings"
)

// physicalGPU is one card as NVML lists it, with what it reported: a single
// outcome for a whole card (or for a card whose query failed), or one per MIG
// instance this process can see. It carries no NVML types, so the choice of
// CUDA's device below is tested without cgo.
type physicalGPU struct {
	index    int
	name     string
	uuid     string
	outcomes []DeviceMemory
}

// outcome answers for the card as a whole. A MIG card that shows several
// instances cannot answer: CUDA uses only one of them, and which one depends
// on CUDA_VISIBLE_DEVICES, not on NVML's order.
func (g physicalGPU) outcome() DeviceMemory {
	if len(g.outcomes) == 1 {
		return g.outcomes[0]
	}
	return QueryFailed{Err: fmt.Errorf(
		"%w: GPU %d (%s) shows this process %d MIG instances; set CUDA_VISIBLE_DEVICES to the MIG-… UUID of the one to use",
		ErrMIGUnresolved, g.index, g.name, len(g.outcomes))}
}

// cudaDevice answers for the GPU CUDA will call device 0: NVML's GPU 0, or
// the device the first CUDA_VISIBLE_DEVICES entry names (visible is its value,
// set whether it is set at all). gpus must not be empty.
//
// A numeric entry is read as an NVML index. CUDA's own default order
// (CUDA_DEVICE_ORDER=FASTEST_FIRST) can differ from NVML's PCI order on a
// machine with mixed GPUs; naming GPUs by UUID avoids the question. An entry
// we cannot match (say, the old MIG-GPU-<uuid>/<gi>/<ci> form) is reported as
// QueryFailed rather than guessed at.
func cudaDevice(gpus []physicalGPU, visible string, set bool) DeviceMemory {
	if !set {
		return gpus[0].outcome()
	}
	first, _, _ := strings.Cut(visible, ",")
	first = strings.TrimSpace(first)
	switch {
	case first == "":
		return NoDevice{Reason: fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q hides every GPU from CUDA", visible)}
	case strings.HasPrefix(first, "MIG-"):
		for _, g := range gpus {
			for _, o := range g.outcomes {
				if r, ok := o.(Reported); ok && strings.HasPrefix(r.UUID, first) {
					return r
				}
			}
		}
	case strings.HasPrefix(first, "GPU-"):
		for _, g := range gpus {
			if g.uuid != "" && strings.HasPrefix(g.uuid, first) {
				return g.outcome()
			}
		}
	default:
		n, err := strconv.Atoi(first)
		if err != nil {
			break
		}
		// CUDA stops at the first invalid index, so a list starting with
		// one (the documented "-1", or an index past the end) shows nothing.
		if n < 0 || n >= len(gpus) {
			return NoDevice{Reason: fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q hides every GPU from CUDA (NVML lists %d)", visible, len(gpus))}
		}
		return gpus[n].outcome()
	}
	uuids := make([]string, 0, len(gpus))
	for _, g := range gpus {
		uuids = append(uuids, g.uuid)
	}
	return QueryFailed{Err: fmt.Errorf("%w: CUDA_VISIBLE_DEVICES=%q; NVML lists %s",
		ErrNotVisible, visible, strings.Join(uuids, ", "))}
}
