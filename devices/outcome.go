// Package devices answers one question for the memory policy: how much memory
// may this device use.
//
// The answer is always an explicit outcome — Reported, QueryFailed or
// NoDevice — never a bare number, because the policy treats them differently:
// a failed query is not a zero budget (docs/memory-policy.md), and a machine without a GPU
// is not an error. This package only reports what the device says; the budget
// rule ("three quarters of free") lives in core/offload (Usable).
package devices

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// DeviceMemory is the outcome of asking one device how much memory it has.
// It is one of Reported, QueryFailed or NoDevice; switch on the type:
//
//	switch m := dm.(type) {
//	case devices.Reported:    // m.Free, m.Total
//	case devices.QueryFailed: // m.Err keeps the library's error name
//	case devices.NoDevice:    // m.Reason
//	}
type DeviceMemory interface {
	fmt.Stringer
	json.Marshaler
	deviceMemory() // seals the set: only this package adds outcomes
}

// Kind says which API answered, because the planner reads the answers
// differently: CUDA's is free memory, Metal's the recommended working set.
type Kind string

const (
	KindCUDA  Kind = "cuda"  // NVIDIA GPU, answered by NVML
	KindMetal Kind = "metal" // Apple GPU, answered by Metal
	KindFake  Kind = "fake"  // the MINFER_FAKE_DEVICE simulation
)

// Reported is a device that answered. Byte counts are the device's own.
type Reported struct {
	Kind Kind `json:"kind"`
	// Index is the NVML index of the physical GPU (for a MIG instance, of the
	// card holding it); 0 for Metal and the fake.
	Index int    `json:"index"`
	Name  string `json:"name"`
	UUID  string `json:"uuid,omitempty"`
	Total uint64 `json:"total_bytes"`
	Free  uint64 `json:"free_bytes"`
	Used  uint64 `json:"used_bytes"`
	// Reserved is memory the driver holds back (NVML v2 only). It is part of
	// Total and never part of Free.
	Reserved uint64 `json:"reserved_bytes,omitempty"`
	// MIG is set when this is a MIG instance rather than a whole card.
	MIG           *MIGInstance `json:"mig,omitempty"`
	DriverVersion string       `json:"driver_version,omitempty"`
	CUDAVersion   string       `json:"cuda_version,omitempty"` // e.g. "13.0", the driver's CUDA version
}

// MIGInstance places a MIG instance on its card.
type MIGInstance struct {
	Index      int    `json:"index"` // NVML's MIG device index on the card
	ParentUUID string `json:"parent_uuid"`
}

// QueryFailed is a device that exists (or may) but whose memory could not be
// read. Err keeps the library's own error name; see QueryError.
type QueryFailed struct {
	Err error
}

// NoDevice says there is no GPU to ask, and why — a normal outcome on a
// machine without one, not an error.
type NoDevice struct {
	Reason string
}

func (Reported) deviceMemory()    {}
func (QueryFailed) deviceMemory() {}
func (NoDevice) deviceMemory()    {}

// Label names the device the way a user finds it: "GPU 0", "GPU 0 MIG 1",
// "Metal", "fake".
func (r Reported) Label() string {
	switch {
	case r.Kind == KindCUDA && r.MIG != nil:
		return fmt.Sprintf("GPU %d MIG %d", r.Index, r.MIG.Index)
	case r.Kind == KindCUDA:
		return fmt.Sprintf("GPU %d", r.Index)
	case r.Kind == KindMetal:
		return "Metal"
	default:
		return string(r.Kind)
	}
}

func (r Reported) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Label(), r.Name)
	if r.UUID != "" {
		fmt.Fprintf(&b, " [%s]", r.UUID)
	}
	fmt.Fprintf(&b, ": %d MiB free of %d MiB (used %d MiB", mib(r.Free), mib(r.Total), mib(r.Used))
	if r.Reserved != 0 {
		fmt.Fprintf(&b, ", reserved %d MiB", mib(r.Reserved))
	}
	b.WriteString(")")
	if r.DriverVersion != "" {
		fmt.Fprintf(&b, "; driver %s", r.DriverVersion)
	}
	if r.CUDAVersion != "" {
		fmt.Fprintf(&b, ", CUDA %s", r.CUDAVersion)
	}
	return b.String()
}

func (q QueryFailed) String() string {
	if q.Err == nil {
		return "device query failed"
	}
	return "device query failed: " + q.Err.Error()
}

func (n NoDevice) String() string { return "no GPU: " + n.Reason }

// MarshalJSON adds "outcome": "reported" so a reader can tell the cases apart.
func (r Reported) MarshalJSON() ([]byte, error) {
	type fields Reported // drops the methods, so no recursion
	return json.Marshal(struct {
		Outcome string `json:"outcome"`
		fields
	}{"reported", fields(r)})
}

// MarshalJSON writes the error text and, when the library named it, the
// error's name on its own ("error_name": "ERROR_NO_PERMISSION").
func (q QueryFailed) MarshalJSON() ([]byte, error) {
	out := struct {
		Outcome   string `json:"outcome"`
		Error     string `json:"error"`
		ErrorName string `json:"error_name,omitempty"`
	}{Outcome: "query_failed"}
	if q.Err != nil {
		out.Error = q.Err.Error()
		if qe, ok := errors.AsType[*QueryError](q.Err); ok {
			out.ErrorName = qe.Name
		}
	}
	return json.Marshal(out)
}

func (n NoDevice) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Outcome string `json:"outcome"`
		Reason  string `json:"reason"`
	}{"no_device", n.Reason})
}

// QueryError is a device library's refusal under the library's own name
// (NVML's "ERROR_NO_PERMISSION"), so the user reads what the driver said, and
// which call said it, rather than our paraphrase.
type QueryError struct {
	Source string // "NVML", or MINFER_FAKE_DEVICE for the simulation
	Call   string // the failing call, e.g. "nvmlDeviceGetMemoryInfo_v2"; may be empty
	Target string // what the call was about, e.g. "GPU 1" or "GPU 0 MIG 2"; may be empty
	Name   string // the library's error name, e.g. "ERROR_NO_PERMISSION"
	Detail string // the library's description, when it says more than Name
}

func (e *QueryError) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	if e.Call != "" {
		b.WriteString(" " + e.Call)
	}
	if e.Target != "" {
		b.WriteString(" on " + e.Target)
	}
	b.WriteString(": " + e.Name)
	if e.Detail != "" && e.Detail != e.Name {
		b.WriteString(" (" + e.Detail + ")")
	}
	return b.String()
}

// ErrMIGUnresolved marks a MIG-enabled GPU for which we cannot tell which
// instance CUDA will use. Reporting the whole card instead would overstate
// the memory by the size of every other instance.
var ErrMIGUnresolved = errors.New("devices: MIG is enabled and the instance CUDA will use is not known")

// ErrNotVisible marks a CUDA_VISIBLE_DEVICES entry that names no device NVML
// lists, so we cannot tell which GPU CUDA will use.
var ErrNotVisible = errors.New("devices: CUDA_VISIBLE_DEVICES names no device NVML lists")

// mib converts bytes to whole MiB for messages (rounding down).
func mib(bytes uint64) uint64 { return bytes >> 20 }
