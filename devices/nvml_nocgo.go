//go:build linux && !cgo

package devices

// go-nvml calls libnvidia-ml through cgo, so a CGO_ENABLED=0 build cannot ask
// NVML at all. That is a missing capability, not a failed query.
func platformGPUs() ([]DeviceMemory, DeviceMemory) {
	none := NoDevice{Reason: "built without cgo (NVML needs it)"}
	return []DeviceMemory{none}, none
}

func platformClose() error { return nil }
