//go:build !linux && !darwin && !windows

package devices

import (
	"fmt"
	"runtime"
)

func hostMemory() (HostMem, error) {
	return HostMem{}, fmt.Errorf("%w: not queried on %s", ErrHostMemoryUnknown, runtime.GOOS)
}
