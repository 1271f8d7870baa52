package offload

import (
	"errors"
	"math"
	"testing"

	"github.com/minfer/minfer/devices"
)

const mib = 1 << 20

var h200 = devices.Reported{Kind: devices.KindCUDA, Name: "NVIDIA H200", Total: 143771 * mib, Free: 10240 * mib}

func TestWeightBudgetIsThreeQuartersOfTheDevicesAnswer(t *testing.T) {
	cases := []struct {
		name       string
		dm         devices.DeviceMemory
		wantBytes  uint64
		wantSource string
	}{
		{"CUDA free", h200, 7680 * mib, "¾ of 10240 MiB free on NVIDIA H200"},
		{"odd byte count holds back the quarter rounded down",
			devices.Reported{Kind: devices.KindCUDA, Name: "GPU", Free: 7}, 6, "¾ of 1 MiB free on GPU"},
		{"Metal working set",
			devices.Reported{Kind: devices.KindMetal, Name: "Apple M3 Max", Free: 38339 * mib}, 38339*mib - 38339*mib/4, "¾ of 38339 MiB working set on Apple M3 Max"},
		{"unnamed device uses its label",
			devices.Reported{Kind: devices.KindCUDA, Index: 1, Free: 4 * mib}, 3 * mib, "¾ of 4 MiB free on GPU 1"},
		{"measured zero free fits nothing",
			devices.Reported{Kind: devices.KindCUDA, Name: "NVIDIA H200", Free: 0}, 0, "¾ of 0 MiB free on NVIDIA H200"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := WeightBudget(c.dm, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Bytes != c.wantBytes || got.Source != c.wantSource {
				t.Fatalf("WeightBudget = %+v, want {Bytes:%d Source:%q}", got, c.wantBytes, c.wantSource)
			}
			// One rule, one function.
			if free := c.dm.(devices.Reported).Free; got.Bytes != Usable(free) {
				t.Fatalf("budget %d differs from Usable(%d) = %d", got.Bytes, free, Usable(free))
			}
		})
	}
}

func TestGPUMemOverridesEveryDeviceAnswer(t *testing.T) {
	env := envOf(map[string]string{EnvGPUMem: "4096"})
	for _, dm := range []devices.DeviceMemory{
		h200,
		devices.QueryFailed{Err: errors.New("NVML: ERROR_UNKNOWN")}, // the override needs no device answer
		devices.NoDevice{Reason: "no NVIDIA driver"},
		nil,
	} {
		name := "nil"
		if dm != nil {
			name = dm.String()
		}
		t.Run(name, func(t *testing.T) {
			got, err := WeightBudget(dm, env)
			if err != nil {
				t.Fatal(err)
			}
			want := Budget{Bytes: 4096 * mib, Source: "MINFER_GPU_MEM=4096 MiB"}
			if got != want {
				t.Fatalf("WeightBudget = %+v, want %+v", got, want)
			}
		})
	}
}

func TestGPUMemSpellings(t *testing.T) {
	cases := []struct {
		value     string
		wantBytes uint64
		wantErr   bool
	}{
		{"0", 0, false}, // an explicit zero is honoured: fit nothing
		{" 512 ", 512 * mib, false},
		{"17592186044415", math.MaxUint64 >> 20 << 20, false}, // the largest MiB count whose bytes fit
		{"17592186044416", 0, true},                           // one more overflows the byte count
		{"", 0, true},
		{"4G", 0, true},
		{"4096MiB", 0, true},
		{"-1", 0, true},
		{"1.5", 0, true},
		{"+4", 0, true},
		{"0x100", 0, true},
	}
	for _, c := range cases {
		t.Run(c.value, func(t *testing.T) {
			got, err := WeightBudget(h200, envOf(map[string]string{EnvGPUMem: c.value}))
			if c.wantErr {
				var re *RequestError
				if !errors.As(err, &re) || !errors.Is(err, ErrBadRequest) || re.Source != EnvGPUMem || re.Value != c.value {
					t.Fatalf("WeightBudget with %s=%q = (%+v, %v), want a *RequestError quoting it", EnvGPUMem, c.value, got, err)
				}
				want := `offload: MINFER_GPU_MEM="` + c.value + `" is not a size in MiB (use a whole number of MiB, e.g. 4096)`
				if err.Error() != want {
					t.Fatalf("message\n got %s\nwant %s", err, want)
				}
				return
			}
			if err != nil || got.Bytes != c.wantBytes {
				t.Fatalf("WeightBudget with %s=%q = (%+v, %v), want %d bytes", EnvGPUMem, c.value, got, err, c.wantBytes)
			}
		})
	}
}

func TestNoDeviceNoGPUMemFitsNothing(t *testing.T) {
	cases := []struct {
		name       string
		dm         devices.DeviceMemory
		wantSource string
	}{
		{"no device with reason", devices.NoDevice{Reason: "no NVIDIA driver"}, "no device (no NVIDIA driver): fits nothing"},
		{"no device without reason", devices.NoDevice{}, "no device: fits nothing"},
		{"no answer at all", nil, "no device: fits nothing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := WeightBudget(c.dm, envOf(nil))
			if err != nil {
				t.Fatalf("no device is a normal outcome, not an error: %v", err)
			}
			if got.Bytes != 0 || got.Source != c.wantSource {
				t.Fatalf("WeightBudget = %+v, want 0 bytes from %q", got, c.wantSource)
			}
			// And auto then puts every block on the CPU.
			plan, _ := Request{Auto: true, Source: SourceDefault}.Resolve(4, FitBlocks([]int64{1, 1, 1, 1}, 1, got.Bytes))
			if plan.DeviceBlocks() != 0 || plan.DeviceHoldsUnblocked() {
				t.Fatalf("auto with no device planned %v", plan)
			}
		})
	}
}

func TestFailedQueryIsNotAZeroBudget(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		wantMsg string
	}{
		{"NVML error by name",
			&devices.QueryError{Source: "NVML", Call: "nvmlInit_v2", Name: "ERROR_DRIVER_NOT_LOADED"},
			"offload: device memory query failed: NVML nvmlInit_v2: ERROR_DRIVER_NOT_LOADED"},
		{"MIG unresolved", devices.ErrMIGUnresolved,
			"offload: device memory query failed: devices: MIG is enabled and the instance CUDA will use is not known"},
		{"no error given", nil, "offload: device memory query failed (the device gave no error)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := WeightBudget(devices.QueryFailed{Err: c.err}, nil)
			if err == nil {
				t.Fatalf("a failed query gave budget %+v", got)
			}
			if !errors.Is(err, ErrDeviceQuery) {
				t.Errorf("%v does not wrap ErrDeviceQuery", err)
			}
			if c.err != nil && !errors.Is(err, c.err) {
				t.Errorf("%v does not wrap the device's own error", err)
			}
			var dq *DeviceQueryError
			if !errors.As(err, &dq) || dq.Err != c.err {
				t.Errorf("%#v is not a *DeviceQueryError carrying %v", err, c.err)
			}
			if err.Error() != c.wantMsg {
				t.Fatalf("message\n got %s\nwant %s", err, c.wantMsg)
			}
		})
	}
}

func TestBudgetString(t *testing.T) {
	b, err := WeightBudget(h200, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "7680 MiB (¾ of 10240 MiB free on NVIDIA H200)"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}
