package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/devices"
)

func init() {
	backend.Register(devices.KindCUDA, backend.Driver{Name: "CUDA", Open: openFor, Query: Query, Status: Status})
}

// openFor opens the backend for the device devices answered for (CUDA's
// device 0, the first CUDA_VISIBLE_DEVICES entry).
func openFor(dm devices.DeviceMemory) (backend.Backend, error) {
	var o Options
	if r, ok := dm.(devices.Reported); ok {
		o.ReportedFree = r.Free
	}
	b, err := Open(o)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", backend.ErrUnusable, err)
	}
	return b, nil
}

// Status says whether compute is usable here, without creating a context:
// "CUDA 13.0 driver, compute 9.0: usable", or why not.
func Status() (bool, string) {
	d, err := loadDriver()
	if err != nil {
		return false, fmt.Sprintf("CUDA compute: not usable: %v", err)
	}
	v, err := d.driverVersion()
	if err != nil {
		return false, fmt.Sprintf("CUDA compute: not usable: %v", err)
	}
	drv := "CUDA " + versionString(v) + " driver"
	var n, dev int32
	if err := check("cuDeviceGetCount", sys(d.deviceGetCount, uintptr(unsafe.Pointer(&n)))); err != nil || n == 0 {
		if err == nil {
			err = ErrNoDevice
		}
		return false, fmt.Sprintf("%s: not usable: %v", drv, err)
	}
	if err := check("cuDeviceGet", sys(d.deviceGet, uintptr(unsafe.Pointer(&dev)), 0)); err != nil {
		return false, fmt.Sprintf("%s: not usable: %v", drv, err)
	}
	major, err1 := d.attribute(attrComputeMajor, dev)
	minor, err2 := d.attribute(attrComputeMinor, dev)
	if err := errors.Join(err1, err2); err != nil {
		return false, fmt.Sprintf("%s: not usable: %v", drv, err)
	}
	if !computeOK(major, minor) {
		return false, fmt.Sprintf("%s, compute %d.%d: not usable (the kernels need 6.1)", drv, major, minor)
	}
	return true, fmt.Sprintf("%s, compute %d.%d: usable", drv, major, minor)
}

// Query answers the memory question through the driver when NVML cannot
// (a build without cgo): device 0's name, total, and free as cuMemGetInfo
// reports it inside a context (so the context's own cost is already out).
func Query() devices.DeviceMemory {
	if _, err := loadDriver(); err != nil {
		return devices.NoDevice{Reason: err.Error()}
	}
	dv, err := openDevice(0)
	if err != nil {
		return devices.QueryFailed{Err: err}
	}
	r := devices.Reported{Kind: devices.KindCUDA, Name: dv.name, Total: dv.total, Free: dv.freeAfterCtx,
		Used: dv.total - dv.freeAfterCtx, CUDAVersion: versionString(dv.drvVersion)}
	dv.t.stop(dv.teardown)
	return r
}
