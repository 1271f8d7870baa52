//go:build !linux && !darwin

package devices

import "runtime"

// go-nvml loads libnvidia-ml with dlopen and supports Linux only, and Metal is
// Apple's, so on other systems no GPU is asked.
func platformGPUs() ([]DeviceMemory, DeviceMemory) {
	none := NoDevice{Reason: "GPU memory is not queried on " + runtime.GOOS + " (NVML is read on Linux only, Metal on macOS)"}
	return []DeviceMemory{none}, none
}

func platformClose() error { return nil }
