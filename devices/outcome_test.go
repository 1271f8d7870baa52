package devices

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func TestOutcomeJSON(t *testing.T) {
	permission := &QueryError{Source: "NVML", Call: "nvmlDeviceGetMemoryInfo", Target: "GPU 1", Name: "ERROR_NO_PERMISSION", Detail: "Insufficient Permissions"}
	tests := []struct {
		name string
		dm   DeviceMemory
		want string
	}{
		{"reported", Reported{Kind: KindCUDA, Index: 1, Name: "NVIDIA H200", UUID: "GPU-1", Total: 3 << 20, Free: 1 << 20, Used: 1 << 20, Reserved: 1 << 20, DriverVersion: "580.65.06", CUDAVersion: "13.0"},
			`{"outcome":"reported","kind":"cuda","index":1,"name":"NVIDIA H200","uuid":"GPU-1","total_bytes":3145728,"free_bytes":1048576,"used_bytes":1048576,"reserved_bytes":1048576,"driver_version":"580.65.06","cuda_version":"13.0"}`},
		{"reported MIG", Reported{Kind: KindCUDA, Name: "MIG 1g.10gb", Total: 1, MIG: &MIGInstance{Index: 2, ParentUUID: "GPU-0"}},
			`{"outcome":"reported","kind":"cuda","index":0,"name":"MIG 1g.10gb","total_bytes":1,"free_bytes":0,"used_bytes":0,"mig":{"index":2,"parent_uuid":"GPU-0"}}`},
		{"query failed with a name", QueryFailed{Err: fmt.Errorf("wrapped: %w", permission)},
			`{"outcome":"query_failed","error":"wrapped: NVML nvmlDeviceGetMemoryInfo on GPU 1: ERROR_NO_PERMISSION (Insufficient Permissions)","error_name":"ERROR_NO_PERMISSION"}`},
		{"query failed without a name", QueryFailed{Err: errors.New("boom")},
			`{"outcome":"query_failed","error":"boom"}`},
		{"no device", NoDevice{Reason: "built without cgo (NVML needs it)"},
			`{"outcome":"no_device","reason":"built without cgo (NVML needs it)"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.dm)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("json.Marshal =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestOutcomeString(t *testing.T) {
	tests := []struct {
		name string
		dm   DeviceMemory
		want string
	}{
		{"cuda", Reported{Kind: KindCUDA, Index: 0, Name: "NVIDIA H200", UUID: "GPU-8c", Total: 143771 << 20, Free: 143155 << 20, Used: 1 << 20, Reserved: 615 << 20, DriverVersion: "580.65.06", CUDAVersion: "13.0"},
			"GPU 0 NVIDIA H200 [GPU-8c]: 143155 MiB free of 143771 MiB (used 1 MiB, reserved 615 MiB); driver 580.65.06, CUDA 13.0"},
		{"mig", Reported{Kind: KindCUDA, Index: 1, Name: "NVIDIA H100 MIG 1g.10gb", Total: 10 << 20, Free: 9 << 20, Used: 1 << 20, MIG: &MIGInstance{Index: 3}},
			"GPU 1 MIG 3 NVIDIA H100 MIG 1g.10gb: 9 MiB free of 10 MiB (used 1 MiB)"},
		{"metal", Reported{Kind: KindMetal, Name: "Apple M2 Max", Total: 38339 << 20, Free: 38339 << 20},
			"Metal Apple M2 Max: 38339 MiB free of 38339 MiB (used 0 MiB)"},
		{"fake", Reported{Kind: KindFake, Name: "x", Total: 2 << 20, Free: 1 << 20, Used: 1 << 20},
			"fake x: 1 MiB free of 2 MiB (used 1 MiB)"},
		{"query failed", QueryFailed{Err: &QueryError{Source: "NVML", Call: "nvmlInit", Name: "ERROR_NO_PERMISSION"}},
			"device query failed: NVML nvmlInit: ERROR_NO_PERMISSION"},
		{"query failed, fake", QueryFailed{Err: &QueryError{Source: FakeDeviceEnv, Name: "ERROR_GPU_IS_LOST"}},
			"device query failed: MINFER_FAKE_DEVICE: ERROR_GPU_IS_LOST"},
		{"query failed, nil", QueryFailed{}, "device query failed"},
		{"no device", NoDevice{Reason: "why"}, "no GPU: why"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.dm.String(); got != tt.want {
				t.Errorf("String() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
