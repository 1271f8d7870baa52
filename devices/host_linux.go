package devices

import (
	"fmt"
	"os"
)

func hostMemory() (HostMem, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return HostMem{}, fmt.Errorf("%w: %w", ErrHostMemoryUnknown, err)
	}
	return parseMeminfo(data)
}
