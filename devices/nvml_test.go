//go:build linux && cgo

// These tests drive the NVML path through go-nvml's mock, which imports the
// cgo-only nvml package: hence the cgo tag.

package devices

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

const mi = 1 << 20

// mockCard is a healthy whole card that answers NVML's v2 memory call.
func mockCard(name, uuid string, totalMiB, freeMiB, reservedMiB uint64) *mock.Device {
	total, free, reserved := totalMiB*mi, freeMiB*mi, reservedMiB*mi
	return &mock.Device{
		GetNameFunc:    func() (string, nvml.Return) { return name, nvml.SUCCESS },
		GetUUIDFunc:    func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
		GetMigModeFunc: func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED },
		GetMemoryInfo_v2Func: func() (nvml.Memory_v2, nvml.Return) {
			return nvml.Memory_v2{Total: total, Free: free, Reserved: reserved, Used: total - free - reserved}, nvml.SUCCESS
		},
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: total, Free: free, Used: total - free}, nvml.SUCCESS
		},
	}
}

// mockMIGCard is a MIG-enabled card whose slots hold the given instances (nil
// for an empty slot). It has no memory funcs: reading the whole card's memory
// would panic the test.
func mockMIGCard(uuid string, slots ...*mock.Device) *mock.Device {
	return &mock.Device{
		GetNameFunc:              func() (string, nvml.Return) { return "NVIDIA H100 80GB HBM3", nvml.SUCCESS },
		GetUUIDFunc:              func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
		GetMigModeFunc:           func() (int, int, nvml.Return) { return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS },
		GetMaxMigDeviceCountFunc: func() (int, nvml.Return) { return len(slots), nvml.SUCCESS },
		GetMigDeviceHandleByIndexFunc: func(n int) (nvml.Device, nvml.Return) {
			if slots[n] == nil {
				return nil, nvml.ERROR_NOT_FOUND
			}
			return slots[n], nvml.SUCCESS
		},
	}
}

// mockNVML is a driver (580, CUDA 13.0) that exports every symbol and lists
// the given cards.
func mockNVML(cards ...*mock.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:     func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc: func() nvml.Return { return nvml.SUCCESS },
		ExtensionsFunc: func() nvml.ExtendedInterface {
			return &mock.ExtendedInterface{LookupSymbolFunc: func(string) error { return nil }}
		},
		SystemGetDriverVersionFunc:     func() (string, nvml.Return) { return "580.65.06", nvml.SUCCESS },
		SystemGetCudaDriverVersionFunc: func() (int, nvml.Return) { return 13000, nvml.SUCCESS },
		DeviceGetCountFunc:             func() (int, nvml.Return) { return len(cards), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			return cards[i], nvml.SUCCESS
		},
	}
}

func withoutSymbol(lib *mock.Interface, missing string) {
	lib.ExtensionsFunc = func() nvml.ExtendedInterface {
		return &mock.ExtendedInterface{LookupSymbolFunc: func(s string) error {
			if s == missing {
				return fmt.Errorf("undefined symbol: %s", s)
			}
			return nil
		}}
	}
}

func session(lib nvml.Interface, env map[string]string) *nvmlSession {
	return &nvmlSession{
		open: func() nvml.Interface { return lib },
		lookupEnv: func(key string) (string, bool) {
			v, ok := env[key]
			return v, ok
		},
	}
}

const (
	h200Line = "GPU 0 NVIDIA H200 [GPU-h200]: 143155 MiB free of 143771 MiB (used 1 MiB, reserved 615 MiB); driver 580.65.06, CUDA 13.0"
	l4Line   = "GPU 1 NVIDIA L4 [GPU-l4]: 22000 MiB free of 23034 MiB (used 734 MiB, reserved 300 MiB); driver 580.65.06, CUDA 13.0"
)

func TestNVMLQuery(t *testing.T) {
	// Each case starts from a healthy driver with an H200 and an L4 and
	// breaks one thing. want lists every outcome's String(); primary is the
	// answer for CUDA's device 0.
	tests := []struct {
		name    string
		setup   func(lib *mock.Interface, h200, l4 *mock.Device)
		env     map[string]string
		want    []string
		primary string
	}{
		{name: "two GPUs", want: []string{h200Line, l4Line}, primary: h200Line},
		{
			name:    "library not found",
			setup:   func(lib *mock.Interface, _, _ *mock.Device) { lib.InitFunc = ret(nvml.ERROR_LIBRARY_NOT_FOUND) },
			want:    []string{"no GPU: NVIDIA driver library libnvidia-ml.so.1 not found (nvmlInit: ERROR_LIBRARY_NOT_FOUND)"},
			primary: "no GPU: NVIDIA driver library libnvidia-ml.so.1 not found (nvmlInit: ERROR_LIBRARY_NOT_FOUND)",
		},
		{
			name:    "driver not loaded",
			setup:   func(lib *mock.Interface, _, _ *mock.Device) { lib.InitFunc = ret(nvml.ERROR_DRIVER_NOT_LOADED) },
			want:    []string{"no GPU: NVIDIA kernel driver is not loaded (nvmlInit: ERROR_DRIVER_NOT_LOADED)"},
			primary: "no GPU: NVIDIA kernel driver is not loaded (nvmlInit: ERROR_DRIVER_NOT_LOADED)",
		},
		{
			name:    "init without permission",
			setup:   func(lib *mock.Interface, _, _ *mock.Device) { lib.InitFunc = ret(nvml.ERROR_NO_PERMISSION) },
			want:    []string{"device query failed: NVML nvmlInit: ERROR_NO_PERMISSION"},
			primary: "device query failed: NVML nvmlInit: ERROR_NO_PERMISSION",
		},
		{
			name:    "driver and library versions differ",
			setup:   func(lib *mock.Interface, _, _ *mock.Device) { lib.InitFunc = ret(nvml.ERROR_LIB_RM_VERSION_MISMATCH) },
			want:    []string{"device query failed: NVML nvmlInit: ERROR_LIB_RM_VERSION_MISMATCH"},
			primary: "device query failed: NVML nvmlInit: ERROR_LIB_RM_VERSION_MISMATCH",
		},
		{
			name: "device count fails",
			setup: func(lib *mock.Interface, _, _ *mock.Device) {
				lib.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
			},
			want:    []string{"device query failed: NVML nvmlDeviceGetCount: ERROR_UNKNOWN"},
			primary: "device query failed: NVML nvmlDeviceGetCount: ERROR_UNKNOWN",
		},
		{
			name: "no GPUs",
			setup: func(lib *mock.Interface, _, _ *mock.Device) {
				lib.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
			},
			want:    []string{"no GPU: NVML lists no NVIDIA GPU"},
			primary: "no GPU: NVML lists no NVIDIA GPU",
		},
		{
			name: "second handle lost",
			setup: func(lib *mock.Interface, h200, _ *mock.Device) {
				lib.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
					if i == 1 {
						return nil, nvml.ERROR_GPU_IS_LOST
					}
					return h200, nvml.SUCCESS
				}
			},
			want:    []string{h200Line, "device query failed: NVML nvmlDeviceGetHandleByIndex on GPU 1: ERROR_GPU_IS_LOST"},
			primary: h200Line,
		},
		{
			name:    "name fails",
			setup:   func(_ *mock.Interface, h200, _ *mock.Device) { h200.GetNameFunc = str2(nvml.ERROR_NO_PERMISSION) },
			want:    []string{"device query failed: NVML nvmlDeviceGetName on GPU 0: ERROR_NO_PERMISSION", l4Line},
			primary: "device query failed: NVML nvmlDeviceGetName on GPU 0: ERROR_NO_PERMISSION",
		},
		{
			name:    "uuid fails",
			setup:   func(_ *mock.Interface, _, l4 *mock.Device) { l4.GetUUIDFunc = str2(nvml.ERROR_UNKNOWN) },
			want:    []string{h200Line, "device query failed: NVML nvmlDeviceGetUUID on GPU 1: ERROR_UNKNOWN"},
			primary: h200Line,
		},
		{
			name: "v2 memory without permission",
			setup: func(_ *mock.Interface, h200, _ *mock.Device) {
				h200.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, nvml.ERROR_NO_PERMISSION }
			},
			want:    []string{"device query failed: NVML nvmlDeviceGetMemoryInfo_v2 on GPU 0: ERROR_NO_PERMISSION", l4Line},
			primary: "device query failed: NVML nvmlDeviceGetMemoryInfo_v2 on GPU 0: ERROR_NO_PERMISSION",
		},
		{
			name: "v2 not supported: v1",
			setup: func(_ *mock.Interface, h200, _ *mock.Device) {
				h200.GetMemoryInfo_v2Func = mem2(nvml.ERROR_NOT_SUPPORTED)
			},
			want:    []string{"GPU 0 NVIDIA H200 [GPU-h200]: 143155 MiB free of 143771 MiB (used 616 MiB); driver 580.65.06, CUDA 13.0", l4Line},
			primary: "GPU 0 NVIDIA H200 [GPU-h200]: 143155 MiB free of 143771 MiB (used 616 MiB); driver 580.65.06, CUDA 13.0",
		},
		{
			name: "v2 function not found: v1",
			setup: func(_ *mock.Interface, _, l4 *mock.Device) {
				l4.GetMemoryInfo_v2Func = mem2(nvml.ERROR_FUNCTION_NOT_FOUND)
			},
			want:    []string{h200Line, "GPU 1 NVIDIA L4 [GPU-l4]: 22000 MiB free of 23034 MiB (used 1034 MiB); driver 580.65.06, CUDA 13.0"},
			primary: h200Line,
		},
		{
			name: "v2 struct version unknown to the driver: v1",
			setup: func(_ *mock.Interface, _, l4 *mock.Device) {
				l4.GetMemoryInfo_v2Func = mem2(nvml.ERROR_ARGUMENT_VERSION_MISMATCH)
			},
			want:    []string{h200Line, "GPU 1 NVIDIA L4 [GPU-l4]: 22000 MiB free of 23034 MiB (used 1034 MiB); driver 580.65.06, CUDA 13.0"},
			primary: h200Line,
		},
		{
			// The v2 funcs are removed: calling one would panic the test,
			// as calling a missing C symbol would end the process.
			name: "driver without the v2 symbol: v1, v2 never called",
			setup: func(lib *mock.Interface, h200, l4 *mock.Device) {
				withoutSymbol(lib, "nvmlDeviceGetMemoryInfo_v2")
				h200.GetMemoryInfo_v2Func, l4.GetMemoryInfo_v2Func = nil, nil
			},
			want: []string{
				"GPU 0 NVIDIA H200 [GPU-h200]: 143155 MiB free of 143771 MiB (used 616 MiB); driver 580.65.06, CUDA 13.0",
				"GPU 1 NVIDIA L4 [GPU-l4]: 22000 MiB free of 23034 MiB (used 1034 MiB); driver 580.65.06, CUDA 13.0",
			},
			primary: "GPU 0 NVIDIA H200 [GPU-h200]: 143155 MiB free of 143771 MiB (used 616 MiB); driver 580.65.06, CUDA 13.0",
		},
		{
			name: "v1 fails after the fallback",
			setup: func(_ *mock.Interface, h200, _ *mock.Device) {
				h200.GetMemoryInfo_v2Func = mem2(nvml.ERROR_NOT_SUPPORTED)
				h200.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
			},
			want:    []string{"device query failed: NVML nvmlDeviceGetMemoryInfo on GPU 0: ERROR_GPU_IS_LOST", l4Line},
			primary: "device query failed: NVML nvmlDeviceGetMemoryInfo on GPU 0: ERROR_GPU_IS_LOST",
		},
		{
			name: "MIG mode query fails",
			setup: func(_ *mock.Interface, h200, _ *mock.Device) {
				h200.GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_UNKNOWN }
			},
			want:    []string{"device query failed: NVML nvmlDeviceGetMigMode on GPU 0: ERROR_UNKNOWN", l4Line},
			primary: "device query failed: NVML nvmlDeviceGetMigMode on GPU 0: ERROR_UNKNOWN",
		},
		{
			name: "MIG capable, disabled",
			setup: func(_ *mock.Interface, h200, _ *mock.Device) {
				h200.GetMigModeFunc = func() (int, int, nvml.Return) { return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS }
			},
			want: []string{h200Line, l4Line}, primary: h200Line,
		},
		{
			name: "driver before MIG: mode never asked",
			setup: func(lib *mock.Interface, h200, l4 *mock.Device) {
				withoutSymbol(lib, "nvmlDeviceGetMigMode")
				h200.GetMigModeFunc, l4.GetMigModeFunc = nil, nil
			},
			want: []string{h200Line, l4Line}, primary: h200Line,
		},
		{
			name: "versions unavailable",
			setup: func(lib *mock.Interface, _, _ *mock.Device) {
				lib.SystemGetDriverVersionFunc = str2(nvml.ERROR_NOT_SUPPORTED)
				lib.SystemGetCudaDriverVersionFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
			},
			want: []string{
				"GPU 0 NVIDIA H200 [GPU-h200]: 143155 MiB free of 143771 MiB (used 1 MiB, reserved 615 MiB)",
				"GPU 1 NVIDIA L4 [GPU-l4]: 22000 MiB free of 23034 MiB (used 734 MiB, reserved 300 MiB)",
			},
			primary: "GPU 0 NVIDIA H200 [GPU-h200]: 143155 MiB free of 143771 MiB (used 1 MiB, reserved 615 MiB)",
		},
		{
			name:    "CUDA_VISIBLE_DEVICES picks the L4",
			env:     map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-l4"},
			want:    []string{h200Line, l4Line},
			primary: l4Line,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h200 := mockCard("NVIDIA H200", "GPU-h200", 143771, 143155, 615)
			l4 := mockCard("NVIDIA L4", "GPU-l4", 23034, 22000, 300)
			lib := mockNVML(h200, l4)
			if tt.setup != nil {
				tt.setup(lib, h200, l4)
			}
			all, primary := session(lib, tt.env).query()
			checkOutcomes(t, all, primary, tt.want, tt.primary)
		})
	}
}

func TestNVMLQueryMIG(t *testing.T) {
	instance := func(name, uuid string, totalMiB, freeMiB uint64) *mock.Device {
		d := mockCard(name, uuid, totalMiB, freeMiB, 0)
		d.GetMigModeFunc = nil // a MIG instance is not asked about MIG
		return d
	}
	small := instance("NVIDIA H100 80GB HBM3 MIG 1g.10gb", "MIG-small", 9984, 9900)
	large := instance("NVIDIA H100 80GB HBM3 MIG 3g.40gb", "MIG-large", 40192, 40000)
	const (
		smallLine = "GPU 0 MIG 1 NVIDIA H100 80GB HBM3 MIG 1g.10gb [MIG-small]: 9900 MiB free of 9984 MiB (used 84 MiB); driver 580.65.06, CUDA 13.0"
		largeLine = "GPU 0 MIG 4 NVIDIA H100 80GB HBM3 MIG 3g.40gb [MIG-large]: 40000 MiB free of 40192 MiB (used 192 MiB); driver 580.65.06, CUDA 13.0"
	)
	tests := []struct {
		name    string
		card    *mock.Device
		env     map[string]string
		want    []string
		primary string
		err     error // when the primary is a QueryFailed wrapping it
	}{
		{name: "one instance visible", card: mockMIGCard("GPU-h100", nil, small, nil),
			want: []string{smallLine}, primary: smallLine},
		{name: "two instances, none chosen", card: mockMIGCard("GPU-h100", nil, small, nil, nil, large),
			want: []string{smallLine, largeLine}, err: ErrMIGUnresolved},
		{name: "two instances, one chosen", card: mockMIGCard("GPU-h100", nil, small, nil, nil, large),
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "MIG-large"},
			want: []string{smallLine, largeLine}, primary: largeLine},
		{name: "no instance visible", card: mockMIGCard("GPU-h100", nil, nil),
			want: []string{"device query failed: devices: MIG is enabled and the instance CUDA will use is not known: GPU 0 (NVIDIA H100 80GB HBM3) has MIG enabled but this process sees no MIG instance among its 2 slots"},
			err:  ErrMIGUnresolved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all, primary := session(mockNVML(tt.card), tt.env).query()
			if tt.err != nil {
				checkOutcomes(t, all, primary, tt.want, primary.String())
				if q, ok := primary.(QueryFailed); !ok || !errors.Is(q.Err, tt.err) {
					t.Errorf("primary = %v, want QueryFailed wrapping %v", primary, tt.err)
				}
				return
			}
			checkOutcomes(t, all, primary, tt.want, tt.primary)
			if r := primary.(Reported); r.MIG == nil || r.MIG.ParentUUID != "GPU-h100" {
				t.Errorf("primary.MIG = %+v, want the parent GPU-h100", r.MIG)
			}
		})
	}

	t.Run("slot errors", func(t *testing.T) {
		nameless := instance("", "MIG-x", 1, 1)
		nameless.GetNameFunc = str2(nvml.ERROR_NO_PERMISSION)
		card := mockMIGCard("GPU-h100", small, nameless)
		card.GetMigDeviceHandleByIndexFunc = func(n int) (nvml.Device, nvml.Return) {
			return []nvml.Device{small, nameless, nil}[n], []nvml.Return{nvml.SUCCESS, nvml.SUCCESS, nvml.ERROR_UNKNOWN}[n]
		}
		card.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 3, nvml.SUCCESS }
		all, _ := session(mockNVML(card), nil).query()
		checkOutcomes(t, all, nil, []string{
			strings.Replace(smallLine, "MIG 1", "MIG 0", 1),
			"device query failed: NVML nvmlDeviceGetName on GPU 0 MIG 1: ERROR_NO_PERMISSION",
			"device query failed: NVML nvmlDeviceGetMigDeviceHandleByIndex on GPU 0 MIG 2: ERROR_UNKNOWN",
		}, "")
	})
	t.Run("slot count fails", func(t *testing.T) {
		card := mockMIGCard("GPU-h100")
		card.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		all, primary := session(mockNVML(card), nil).query()
		line := "device query failed: NVML nvmlDeviceGetMaxMigDeviceCount on GPU 0: ERROR_NOT_SUPPORTED"
		checkOutcomes(t, all, primary, []string{line}, line)
	})
}

func TestNVMLSessionLifecycle(t *testing.T) {
	t.Run("initialises once, shuts down once, starts again", func(t *testing.T) {
		lib := mockNVML(mockCard("NVIDIA L4", "GPU-l4", 23034, 22000, 300))
		s := session(lib, nil)
		s.query()
		s.query()
		if n := len(lib.InitCalls()); n != 1 {
			t.Errorf("Init called %d times over two queries, want 1", n)
		}
		if err := s.close(); err != nil {
			t.Fatal(err)
		}
		if err := s.close(); err != nil {
			t.Fatalf("second close: %v", err)
		}
		if n := len(lib.ShutdownCalls()); n != 1 {
			t.Errorf("Shutdown called %d times, want 1", n)
		}
		s.query()
		if n := len(lib.InitCalls()); n != 2 {
			t.Errorf("Init called %d times after close and a query, want 2", n)
		}
	})
	t.Run("a failed init is kept until close", func(t *testing.T) {
		lib := mockNVML()
		lib.InitFunc = ret(nvml.ERROR_NO_PERMISSION)
		s := session(lib, nil)
		s.query()
		s.query()
		if n := len(lib.InitCalls()); n != 1 {
			t.Errorf("Init called %d times, want 1", n)
		}
		if n := len(lib.DeviceGetCountCalls()); n != 0 {
			t.Errorf("DeviceGetCount called %d times after a failed Init, want 0", n)
		}
		if err := s.close(); err != nil {
			t.Errorf("close after a failed init: %v", err)
		}
		if n := len(lib.ShutdownCalls()); n != 0 {
			t.Errorf("Shutdown called %d times without a successful Init, want 0", n)
		}
		s.query()
		if n := len(lib.InitCalls()); n != 2 {
			t.Errorf("Init called %d times after close, want 2", n)
		}
	})
	t.Run("shutdown error names NVML's error", func(t *testing.T) {
		lib := mockNVML()
		lib.ShutdownFunc = ret(nvml.ERROR_UNINITIALIZED)
		s := session(lib, nil)
		s.query()
		err := s.close()
		var qe *QueryError
		if !errors.As(err, &qe) || qe.Call != "nvmlShutdown" || qe.Name != "ERROR_UNINITIALIZED" {
			t.Errorf("close = %v, want nvmlShutdown: ERROR_UNINITIALIZED", err)
		}
	})
	t.Run("several goroutines", func(t *testing.T) {
		lib := mockNVML(mockCard("NVIDIA L4", "GPU-l4", 23034, 22000, 300))
		s := session(lib, nil)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 10 {
					if _, primary := s.query(); primary.String() != strings.Replace(l4Line, "GPU 1", "GPU 0", 1) {
						t.Errorf("primary = %v", primary)
					}
				}
			})
		}
		wg.Wait()
		if n := len(lib.InitCalls()); n != 1 {
			t.Errorf("Init called %d times from 8 goroutines, want 1", n)
		}
	})
}

func TestNVMLReturnName(t *testing.T) {
	for ret, want := range map[nvml.Return]string{
		nvml.ERROR_NO_PERMISSION: "ERROR_NO_PERMISSION",
		nvml.ERROR_UNKNOWN:       "ERROR_UNKNOWN",
		nvml.Return(77):          "NVML_RETURN_77",
	} {
		t.Run(want, func(t *testing.T) {
			if got := nvmlReturnName(ret); got != want {
				t.Errorf("nvmlReturnName(%d) = %q, want %q", ret, got, want)
			}
		})
	}
}

func checkOutcomes(t *testing.T, all []DeviceMemory, primary DeviceMemory, want []string, wantPrimary string) {
	t.Helper()
	got := make([]string, len(all))
	for i, dm := range all {
		got[i] = dm.String()
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("outcomes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if primary != nil && primary.String() != wantPrimary {
		t.Errorf("primary:\n%s\nwant:\n%s", primary, wantPrimary)
	}
}

func ret(r nvml.Return) func() nvml.Return { return func() nvml.Return { return r } }

func str2(r nvml.Return) func() (string, nvml.Return) {
	return func() (string, nvml.Return) { return "", r }
}

func mem2(r nvml.Return) func() (nvml.Memory_v2, nvml.Return) {
	return func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, r }
}
