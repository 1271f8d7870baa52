package devices

import (
	"errors"
	"strings"
	"testing"
)

func TestCUDADevice(t *testing.T) {
	card := func(index int, uuid string, free uint64) physicalGPU {
		return physicalGPU{index: index, name: "H100", uuid: uuid,
			outcomes: []DeviceMemory{Reported{Kind: KindCUDA, Index: index, UUID: uuid, Free: free, Total: 80 << 30}}}
	}
	migA := Reported{Kind: KindCUDA, Index: 1, UUID: "MIG-aaaa", Free: 9 << 30, Total: 10 << 30, MIG: &MIGInstance{Index: 0, ParentUUID: "GPU-1111"}}
	migB := Reported{Kind: KindCUDA, Index: 1, UUID: "MIG-bbbb", Free: 19 << 30, Total: 20 << 30, MIG: &MIGInstance{Index: 1, ParentUUID: "GPU-1111"}}
	twoMIG := physicalGPU{index: 1, name: "H100", uuid: "GPU-1111", outcomes: []DeviceMemory{migA, migB}}
	oneMIG := physicalGPU{index: 1, name: "H100", uuid: "GPU-1111", outcomes: []DeviceMemory{migB}}
	gpus := []physicalGPU{card(0, "GPU-0000", 1<<30), twoMIG, card(2, "GPU-2222", 3<<30)}

	tests := []struct {
		name    string
		gpus    []physicalGPU
		visible string
		set     bool
		want    DeviceMemory // nil when wantErr decides
		wantErr error
		noDev   string // part of NoDevice's reason
	}{
		{name: "unset: NVML GPU 0", gpus: gpus, want: gpus[0].outcomes[0]},
		{name: "index", gpus: gpus, visible: "2,0", set: true, want: gpus[2].outcomes[0]},
		{name: "index with spaces", gpus: gpus, visible: " 2 ", set: true, want: gpus[2].outcomes[0]},
		{name: "GPU UUID", gpus: gpus, visible: "GPU-2222", set: true, want: gpus[2].outcomes[0]},
		{name: "GPU UUID prefix", gpus: gpus, visible: "GPU-22,GPU-0000", set: true, want: gpus[2].outcomes[0]},
		{name: "MIG UUID", gpus: gpus, visible: "MIG-bbbb", set: true, want: migB},
		{name: "card with one MIG instance", gpus: []physicalGPU{oneMIG}, want: migB},
		{name: "card with two MIG instances", gpus: gpus, visible: "1", set: true, wantErr: ErrMIGUnresolved},
		{name: "card with two MIG instances by UUID", gpus: gpus, visible: "GPU-1111", set: true, wantErr: ErrMIGUnresolved},
		{name: "unknown GPU UUID", gpus: gpus, visible: "GPU-9999", set: true, wantErr: ErrNotVisible},
		{name: "unknown MIG UUID", gpus: gpus, visible: "MIG-cccc", set: true, wantErr: ErrNotVisible},
		{name: "word", gpus: gpus, visible: "all", set: true, wantErr: ErrNotVisible},
		{name: "empty hides all", gpus: gpus, visible: "", set: true, noDev: `CUDA_VISIBLE_DEVICES="" hides every GPU`},
		{name: "-1 hides all", gpus: gpus, visible: "-1", set: true, noDev: `CUDA_VISIBLE_DEVICES="-1" hides every GPU`},
		{name: "index past the end", gpus: gpus, visible: "3", set: true, noDev: "(NVML lists 3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cudaDevice(tt.gpus, tt.visible, tt.set)
			switch {
			case tt.wantErr != nil:
				q, ok := got.(QueryFailed)
				if !ok || !errors.Is(q.Err, tt.wantErr) {
					t.Fatalf("cudaDevice = %v, want QueryFailed wrapping %v", got, tt.wantErr)
				}
			case tt.noDev != "":
				n, ok := got.(NoDevice)
				if !ok || !strings.Contains(n.Reason, tt.noDev) {
					t.Fatalf("cudaDevice = %v, want NoDevice containing %q", got, tt.noDev)
				}
			case got.String() != tt.want.String():
				t.Fatalf("cudaDevice = %v, want %v", got, tt.want)
			}
		})
	}
}
