//go:build linux && cgo

package devices

import (
	"fmt"
	"os"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlLibrary is the file go-nvml opens; NoDevice reasons name it so a user
// knows what is missing.
const nvmlLibrary = "libnvidia-ml.so.1"

var systemNVML = &nvmlSession{
	open:      func() nvml.Interface { return nvml.New() },
	lookupEnv: os.LookupEnv,
}

func platformGPUs() ([]DeviceMemory, DeviceMemory) { return systemNVML.query() }

func platformClose() error { return systemNVML.close() }

// nvmlSession initialises NVML once and serialises every call through it, so
// the package is safe from several goroutines. It is written against
// nvml.Interface so tests inject go-nvml's mock.
type nvmlSession struct {
	open      func() nvml.Interface
	lookupEnv func(string) (string, bool) // reads CUDA_VISIBLE_DEVICES

	mu          sync.Mutex
	lib         nvml.Interface // non-nil while NVML is initialised
	initFailure DeviceMemory   // why Init failed; kept until close, so we ask once
	hasMemoryV2 bool           // the driver exports nvmlDeviceGetMemoryInfo_v2
	hasMIG      bool           // the driver exports nvmlDeviceGetMigMode
}

// query lists every GPU and answers for the one CUDA will use.
func (s *nvmlSession) query() (all []DeviceMemory, primary DeviceMemory) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if failed := s.start(); failed != nil {
		return []DeviceMemory{failed}, failed
	}
	count, ret := s.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		failed := QueryFailed{Err: nvmlError("nvmlDeviceGetCount", "", ret)}
		return []DeviceMemory{failed}, failed
	}
	if count == 0 {
		none := NoDevice{Reason: "NVML lists no NVIDIA GPU"}
		return []DeviceMemory{none}, none
	}
	driver, cuda := s.versions()
	gpus := make([]physicalGPU, count)
	for i := range gpus {
		gpus[i] = s.describe(i, driver, cuda)
		all = append(all, gpus[i].outcomes...)
	}
	visible, set := s.lookupEnv("CUDA_VISIBLE_DEVICES")
	return all, cudaDevice(gpus, visible, set)
}

// start initialises NVML unless that has been done (or has failed) already.
// It returns the outcome to report when NVML cannot be used.
func (s *nvmlSession) start() DeviceMemory {
	if s.lib != nil || s.initFailure != nil {
		return s.initFailure
	}
	lib := s.open()
	// go-nvml's Init returns ERROR_LIBRARY_NOT_FOUND when dlopen fails; it
	// does not panic. Any other call before a successful Init would jump
	// into an unloaded library, so nothing else is called on failure.
	switch ret := lib.Init(); ret {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		s.initFailure = NoDevice{Reason: "NVIDIA driver library " + nvmlLibrary + " not found (nvmlInit: ERROR_LIBRARY_NOT_FOUND)"}
		return s.initFailure
	case nvml.ERROR_DRIVER_NOT_LOADED:
		s.initFailure = NoDevice{Reason: "NVIDIA kernel driver is not loaded (nvmlInit: ERROR_DRIVER_NOT_LOADED)"}
		return s.initFailure
	default:
		s.initFailure = QueryFailed{Err: nvmlError("nvmlInit", "", ret)}
		return s.initFailure
	}
	// go-nvml calls C symbols directly: calling one an old driver lacks ends
	// the process, so optional entry points are looked up first.
	ext := lib.Extensions()
	s.hasMemoryV2 = ext.LookupSymbol("nvmlDeviceGetMemoryInfo_v2") == nil
	s.hasMIG = ext.LookupSymbol("nvmlDeviceGetMigMode") == nil
	s.lib = lib
	return nil
}

// close shuts NVML down. A later query initialises it again.
func (s *nvmlSession) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initFailure = nil
	if s.lib == nil {
		return nil
	}
	lib := s.lib
	s.lib = nil
	if ret := lib.Shutdown(); ret != nvml.SUCCESS {
		return nvmlError("nvmlShutdown", "", ret)
	}
	return nil
}

// versions are informational: a driver that will not say them still reports
// memory, so their errors leave the strings empty instead of failing.
func (s *nvmlSession) versions() (driver, cuda string) {
	if v, ret := s.lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		driver = v
	}
	// NVML encodes CUDA 12.4 as 12040.
	if v, ret := s.lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS && v > 0 {
		cuda = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	return driver, cuda
}

// describe reads one card: its whole memory, or each visible MIG instance's.
func (s *nvmlSession) describe(index int, driver, cuda string) physicalGPU {
	g := physicalGPU{index: index}
	target := fmt.Sprintf("GPU %d", index)
	failed := func(call string, ret nvml.Return) physicalGPU {
		g.outcomes = []DeviceMemory{QueryFailed{Err: nvmlError(call, target, ret)}}
		return g
	}
	h, ret := s.lib.DeviceGetHandleByIndex(index)
	if ret != nvml.SUCCESS {
		return failed("nvmlDeviceGetHandleByIndex", ret)
	}
	if g.name, ret = h.GetName(); ret != nvml.SUCCESS {
		return failed("nvmlDeviceGetName", ret)
	}
	if g.uuid, ret = h.GetUUID(); ret != nvml.SUCCESS {
		return failed("nvmlDeviceGetUUID", ret)
	}
	if s.hasMIG {
		mode, _, ret := h.GetMigMode()
		switch {
		case ret == nvml.ERROR_NOT_SUPPORTED: // a card without MIG
		case ret != nvml.SUCCESS:
			return failed("nvmlDeviceGetMigMode", ret)
		case mode == nvml.DEVICE_MIG_ENABLE:
			g.outcomes = s.migInstances(h, g, driver, cuda)
			return g
		}
	}
	r := Reported{Kind: KindCUDA, Index: index, Name: g.name, UUID: g.uuid, DriverVersion: driver, CUDAVersion: cuda}
	if call, ret := s.readMemory(h, &r); ret != nvml.SUCCESS {
		return failed(call, ret)
	}
	g.outcomes = []DeviceMemory{r}
	return g
}

// migInstances reports each MIG instance this process can see on a card.
// The card's own numbers would count every instance, so they are never used.
func (s *nvmlSession) migInstances(h nvml.Device, card physicalGPU, driver, cuda string) []DeviceMemory {
	cardTarget := fmt.Sprintf("GPU %d", card.index)
	slots, ret := h.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return []DeviceMemory{QueryFailed{Err: nvmlError("nvmlDeviceGetMaxMigDeviceCount", cardTarget, ret)}}
	}
	var out []DeviceMemory
	for slot := range slots {
		target := fmt.Sprintf("GPU %d MIG %d", card.index, slot)
		failed := func(call string, ret nvml.Return) {
			out = append(out, QueryFailed{Err: nvmlError(call, target, ret)})
		}
		mh, ret := h.GetMigDeviceHandleByIndex(slot)
		if ret == nvml.ERROR_NOT_FOUND {
			continue // an empty slot, or an instance not given to this process
		}
		if ret != nvml.SUCCESS {
			failed("nvmlDeviceGetMigDeviceHandleByIndex", ret)
			continue
		}
		r := Reported{Kind: KindCUDA, Index: card.index, MIG: &MIGInstance{Index: slot, ParentUUID: card.uuid},
			DriverVersion: driver, CUDAVersion: cuda}
		if r.Name, ret = mh.GetName(); ret != nvml.SUCCESS {
			failed("nvmlDeviceGetName", ret)
			continue
		}
		if r.UUID, ret = mh.GetUUID(); ret != nvml.SUCCESS {
			failed("nvmlDeviceGetUUID", ret)
			continue
		}
		if call, ret := s.readMemory(mh, &r); ret != nvml.SUCCESS {
			failed(call, ret)
			continue
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return []DeviceMemory{QueryFailed{Err: fmt.Errorf(
			"%w: GPU %d (%s) has MIG enabled but this process sees no MIG instance among its %d slots",
			ErrMIGUnresolved, card.index, card.name, slots)}}
	}
	return out
}

// readMemory fills r's byte counts, preferring NVML's v2 answer: v1 counts
// the driver's reservation as used, v2 reports it apart. It falls back to v1
// where the driver lacks v2. On failure it names the call that failed.
func (s *nvmlSession) readMemory(h nvml.Device, r *Reported) (call string, ret nvml.Return) {
	if s.hasMemoryV2 {
		m, ret := h.GetMemoryInfo_v2()
		switch ret {
		case nvml.SUCCESS:
			r.Total, r.Free, r.Used, r.Reserved = m.Total, m.Free, m.Used, m.Reserved
			return "", ret
		case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND, nvml.ERROR_ARGUMENT_VERSION_MISMATCH:
			// fall back to v1 below
		default:
			return "nvmlDeviceGetMemoryInfo_v2", ret
		}
	}
	m, ret := h.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return "nvmlDeviceGetMemoryInfo", ret
	}
	r.Total, r.Free, r.Used = m.Total, m.Free, m.Used
	return "", ret
}

// nvmlError keeps NVML's error name (ERROR_NO_PERMISSION) and, once the
// library is loaded, its description ("Insufficient Permissions").
func nvmlError(call, target string, ret nvml.Return) *QueryError {
	return &QueryError{Source: "NVML", Call: call, Target: target, Name: nvmlReturnName(ret), Detail: ret.Error()}
}

// nvmlReturnName spells a Return as nvml.h names it. go-nvml's Error() gives
// the names only while the library is not loaded; loaded, it gives NVML's
// prose, which is kept as the detail.
func nvmlReturnName(ret nvml.Return) string {
	if name, ok := nvmlReturnNames[ret]; ok {
		return name
	}
	return fmt.Sprintf("NVML_RETURN_%d", int32(ret))
}

var nvmlReturnNames = map[nvml.Return]string{
	nvml.SUCCESS:                         "SUCCESS",
	nvml.ERROR_UNINITIALIZED:             "ERROR_UNINITIALIZED",
	nvml.ERROR_INVALID_ARGUMENT:          "ERROR_INVALID_ARGUMENT",
	nvml.ERROR_NOT_SUPPORTED:             "ERROR_NOT_SUPPORTED",
	nvml.ERROR_NO_PERMISSION:             "ERROR_NO_PERMISSION",
	nvml.ERROR_ALREADY_INITIALIZED:       "ERROR_ALREADY_INITIALIZED",
	nvml.ERROR_NOT_FOUND:                 "ERROR_NOT_FOUND",
	nvml.ERROR_INSUFFICIENT_SIZE:         "ERROR_INSUFFICIENT_SIZE",
	nvml.ERROR_INSUFFICIENT_POWER:        "ERROR_INSUFFICIENT_POWER",
	nvml.ERROR_DRIVER_NOT_LOADED:         "ERROR_DRIVER_NOT_LOADED",
	nvml.ERROR_TIMEOUT:                   "ERROR_TIMEOUT",
	nvml.ERROR_IRQ_ISSUE:                 "ERROR_IRQ_ISSUE",
	nvml.ERROR_LIBRARY_NOT_FOUND:         "ERROR_LIBRARY_NOT_FOUND",
	nvml.ERROR_FUNCTION_NOT_FOUND:        "ERROR_FUNCTION_NOT_FOUND",
	nvml.ERROR_CORRUPTED_INFOROM:         "ERROR_CORRUPTED_INFOROM",
	nvml.ERROR_GPU_IS_LOST:               "ERROR_GPU_IS_LOST",
	nvml.ERROR_RESET_REQUIRED:            "ERROR_RESET_REQUIRED",
	nvml.ERROR_OPERATING_SYSTEM:          "ERROR_OPERATING_SYSTEM",
	nvml.ERROR_LIB_RM_VERSION_MISMATCH:   "ERROR_LIB_RM_VERSION_MISMATCH",
	nvml.ERROR_IN_USE:                    "ERROR_IN_USE",
	nvml.ERROR_MEMORY:                    "ERROR_MEMORY",
	nvml.ERROR_NO_DATA:                   "ERROR_NO_DATA",
	nvml.ERROR_VGPU_ECC_NOT_SUPPORTED:    "ERROR_VGPU_ECC_NOT_SUPPORTED",
	nvml.ERROR_INSUFFICIENT_RESOURCES:    "ERROR_INSUFFICIENT_RESOURCES",
	nvml.ERROR_FREQ_NOT_SUPPORTED:        "ERROR_FREQ_NOT_SUPPORTED",
	nvml.ERROR_ARGUMENT_VERSION_MISMATCH: "ERROR_ARGUMENT_VERSION_MISMATCH",
	nvml.ERROR_DEPRECATED:                "ERROR_DEPRECATED",
	nvml.ERROR_NOT_READY:                 "ERROR_NOT_READY",
	nvml.ERROR_GPU_NOT_FOUND:             "ERROR_GPU_NOT_FOUND",
	nvml.ERROR_INVALID_STATE:             "ERROR_INVALID_STATE",
	nvml.ERROR_RESET_TYPE_NOT_SUPPORTED:  "ERROR_RESET_TYPE_NOT_SUPPORTED",
	nvml.ERROR_UNKNOWN:                   "ERROR_UNKNOWN",
}
