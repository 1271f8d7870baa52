package cuda

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The driver API is reached through purego: no cgo, no CUDA toolkit at build
// time. Every entry point is looked up once; a library that lacks one is
// reported as ErrNoDriver with the missing name, never a panic.

type driverAPI struct {
	init, driverGetVersion, deviceGetCount, deviceGet, deviceGetName,
	deviceTotalMem, deviceGetAttribute,
	primaryCtxRetain, primaryCtxRelease, ctxSetCurrent, ctxSynchronize,
	memGetInfo, memAlloc, memFree, memAllocHost, memFreeHost,
	memcpyHtoDAsync, memcpyDtoHAsync, memcpyDtoDAsync, memsetD8Async,
	moduleLoadData, moduleUnload, moduleGetFunction, funcSetAttribute,
	launchKernel, streamCreate, streamDestroy, streamSynchronize,
	streamBeginCapture, streamEndCapture, graphInstantiate, graphLaunch,
	graphExecDestroy, graphDestroy,
	eventCreate, eventRecord, eventSynchronize, eventElapsedTime, eventDestroy,
	getErrorName uintptr
	// launchKernelEx (CUDA 12.0 and later) is optional: without it kernels
	// launch without programmatic dependent launch (pdl.go).
	launchKernelEx uintptr
	// streamWriteValue32 (cuStreamWriteValue32_v2, CUDA 11.7 and later),
	// memHostAlloc and memHostGetDevicePointer are optional: without them
	// reads stay plain (readpoll.go).
	streamWriteValue32, memHostAlloc, memHostGetDevicePointer uintptr
	// streamWaitValue32 (cuStreamWaitValue32_v2) is optional: without it
	// there are no gated runs (gate.go).
	streamWaitValue32 uintptr
	// memHostRegister and memHostUnregister are optional: without them
	// PinHost fails and reads go through the staging (readpoll.go).
	memHostRegister, memHostUnregister uintptr
}

func (d *driverAPI) symbols() []struct {
	name string
	p    *uintptr
} {
	return []struct {
		name string
		p    *uintptr
	}{
		{"cuInit", &d.init}, {"cuDriverGetVersion", &d.driverGetVersion},
		{"cuDeviceGetCount", &d.deviceGetCount}, {"cuDeviceGet", &d.deviceGet},
		{"cuDeviceGetName", &d.deviceGetName}, {"cuDeviceTotalMem_v2", &d.deviceTotalMem},
		{"cuDeviceGetAttribute", &d.deviceGetAttribute},
		{"cuDevicePrimaryCtxRetain", &d.primaryCtxRetain}, {"cuDevicePrimaryCtxRelease_v2", &d.primaryCtxRelease},
		{"cuCtxSetCurrent", &d.ctxSetCurrent}, {"cuCtxSynchronize", &d.ctxSynchronize},
		{"cuMemGetInfo_v2", &d.memGetInfo}, {"cuMemAlloc_v2", &d.memAlloc}, {"cuMemFree_v2", &d.memFree},
		{"cuMemAllocHost_v2", &d.memAllocHost}, {"cuMemFreeHost", &d.memFreeHost},
		{"cuMemcpyHtoDAsync_v2", &d.memcpyHtoDAsync}, {"cuMemcpyDtoHAsync_v2", &d.memcpyDtoHAsync},
		{"cuMemcpyDtoDAsync_v2", &d.memcpyDtoDAsync}, {"cuMemsetD8Async", &d.memsetD8Async},
		{"cuModuleLoadData", &d.moduleLoadData}, {"cuModuleUnload", &d.moduleUnload},
		{"cuModuleGetFunction", &d.moduleGetFunction}, {"cuFuncSetAttribute", &d.funcSetAttribute},
		{"cuLaunchKernel", &d.launchKernel},
		{"cuStreamCreate", &d.streamCreate}, {"cuStreamDestroy_v2", &d.streamDestroy},
		{"cuStreamSynchronize", &d.streamSynchronize},
		{"cuStreamBeginCapture_v2", &d.streamBeginCapture}, {"cuStreamEndCapture", &d.streamEndCapture},
		{"cuGraphInstantiateWithFlags", &d.graphInstantiate}, {"cuGraphLaunch", &d.graphLaunch},
		{"cuGraphExecDestroy", &d.graphExecDestroy}, {"cuGraphDestroy", &d.graphDestroy},
		{"cuEventCreate", &d.eventCreate}, {"cuEventRecord", &d.eventRecord},
		{"cuEventSynchronize", &d.eventSynchronize}, {"cuEventElapsedTime", &d.eventElapsedTime},
		{"cuEventDestroy_v2", &d.eventDestroy}, {"cuGetErrorName", &d.getErrorName},
	}
}

var (
	drvOnce sync.Once
	drv     *driverAPI
	drvErr  error
)

// loadDriver opens the driver library and calls cuInit, once per process.
func loadDriver() (*driverAPI, error) {
	drvOnce.Do(func() {
		var lib uintptr
		var errs []string
		for _, name := range libNames {
			h, err := dlopen(name)
			if err == nil {
				lib = h
				break
			}
			errs = append(errs, err.Error())
		}
		if lib == 0 {
			drvErr = fmt.Errorf("%w: cannot load %s (%v)", ErrNoDriver, libNames[0], errs)
			return
		}
		d := &driverAPI{}
		for _, s := range d.symbols() {
			p, err := dlsym(lib, s.name)
			if err != nil || p == 0 {
				drvErr = fmt.Errorf("%w: %s lacks %s (driver too old?)", ErrNoDriver, libNames[0], s.name)
				return
			}
			*s.p = p
		}
		if p, err := dlsym(lib, "cuLaunchKernelEx"); err == nil {
			d.launchKernelEx = p
		}
		for _, o := range []struct {
			name string
			p    *uintptr
		}{
			{"cuStreamWriteValue32_v2", &d.streamWriteValue32}, {"cuMemHostAlloc", &d.memHostAlloc},
			{"cuMemHostGetDevicePointer_v2", &d.memHostGetDevicePointer}, {"cuStreamWaitValue32_v2", &d.streamWaitValue32},
			{"cuMemHostRegister_v2", &d.memHostRegister}, {"cuMemHostUnregister", &d.memHostUnregister},
		} {
			if p, err := dlsym(lib, o.name); err == nil {
				*o.p = p
			}
		}
		if err := check("cuInit", sys(d.init, 0)); err != nil {
			drvErr = fmt.Errorf("%w: %v", ErrNoDriver, err)
			return
		}
		drv = d
	})
	return drv, drvErr
}

// sys calls a driver entry point and returns its CUresult. Pointers passed
// as uintptr(unsafe.Pointer(&x)) in the call expression are kept alive and
// in place for the call (uintptrescapes, as purego.SyscallN).
//
//go:uintptrescapes
func sys(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// driverVersion is e.g. 13000 for CUDA 13.0.
func (d *driverAPI) driverVersion() (int, error) {
	var v int32
	if err := check("cuDriverGetVersion", sys(d.driverGetVersion, uintptr(unsafe.Pointer(&v)))); err != nil {
		return 0, err
	}
	return int(v), nil
}

// versionString is e.g. "13.0" for driver version 13000.
func versionString(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// computeOK reports whether compute capability major.minor runs the
// kernels: 6.1 or later (dp4a).
func computeOK(major, minor int) bool { return major > 6 || major == 6 && minor >= 1 }

// Device attributes Minfer reads (CUdevice_attribute).
const (
	attrMultiprocessors   = 16
	attrComputeMajor      = 75
	attrComputeMinor      = 76
	attrMaxSharedPerBlock = 97 // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
)

func (d *driverAPI) attribute(attr int, dev int32) (int, error) {
	var v int32
	if err := check("cuDeviceGetAttribute", sys(d.deviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(dev))); err != nil {
		return 0, err
	}
	return int(v), nil
}

func (d *driverAPI) deviceName(dev int32) string {
	buf := make([]byte, 256)
	if check("cuDeviceGetName", sys(d.deviceGetName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(dev))) != nil {
		return "NVIDIA GPU"
	}
	for i, c := range buf {
		if c == 0 {
			return string(buf[:i])
		}
	}
	return string(buf)
}

func (d *driverAPI) memInfo() (free, total uint64, err error) {
	err = check("cuMemGetInfo", sys(d.memGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total))))
	return
}
