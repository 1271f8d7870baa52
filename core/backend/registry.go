package backend

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/minfer/minfer/devices"
)

// ErrNoBackend: no compute backend is registered for the device's kind.
var ErrNoBackend = errors.New("no compute backend for this device")

// ErrUnusable: a backend is registered for the device's kind but cannot
// run here (library or driver missing, device too old); the wrapped error
// says why.
var ErrUnusable = errors.New("device backend unusable")

// Driver is a device backend's entry in the registry.
type Driver struct {
	// Name is shown in reports ("CUDA").
	Name string
	// Open creates a backend for the device that gave answer dm (its
	// memory answer from devices, or from Query). The caller owns the
	// result and closes it. A missing library or driver is an error
	// wrapping ErrUnusable with the reason, never a crash.
	Open func(dm devices.DeviceMemory) (Backend, error)
	// Query, when set, answers the memory question through the backend's
	// own driver: used when devices has no answer of its kind (a build
	// without cgo cannot ask NVML). It returns NoDevice when it cannot.
	Query func() devices.DeviceMemory
	// Status says whether compute is usable on this machine and why not
	// ("CUDA 13.0 driver, compute 9.0: usable").
	Status func() (usable bool, line string)
}

var (
	regMu   sync.Mutex
	drivers = map[devices.Kind]Driver{}
)

// Register adds the driver for kind (called from the backend package's
// init). A second registration for one kind replaces the first.
func Register(kind devices.Kind, d Driver) {
	regMu.Lock()
	defer regMu.Unlock()
	drivers[kind] = d
}

// Lookup returns the driver registered for kind.
func Lookup(kind devices.Kind) (Driver, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	d, ok := drivers[kind]
	return d, ok
}

// Kinds lists the registered kinds, sorted.
func Kinds() []devices.Kind {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]devices.Kind, 0, len(drivers))
	for k := range drivers {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Open creates the compute backend for the device that answered dm.
func Open(dm devices.DeviceMemory) (Backend, error) {
	r, ok := dm.(devices.Reported)
	if !ok {
		return nil, fmt.Errorf("%w: %v", ErrNoBackend, dm)
	}
	d, ok := Lookup(r.Kind)
	if !ok {
		return nil, fmt.Errorf("%w: Minfer has no %s compute backend yet", ErrNoBackend, r.Kind)
	}
	return d.Open(dm)
}

// QueryDevice asks each registered driver with a Query for a device, in
// kind order, and returns the first Reported answer, or NoDevice naming
// why none answered.
func QueryDevice() devices.DeviceMemory {
	var reasons []string
	for _, k := range Kinds() {
		d, _ := Lookup(k)
		if d.Query == nil {
			continue
		}
		switch a := d.Query().(type) {
		case devices.Reported:
			return a
		default:
			reasons = append(reasons, fmt.Sprintf("%s: %v", d.Name, a))
		}
	}
	if len(reasons) == 0 {
		return devices.NoDevice{Reason: "no device driver registered"}
	}
	return devices.NoDevice{Reason: fmt.Sprint(reasons)}
}
