package devices

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestQueryRealDevice asks this machine's real device. Without a GPU it must
// say NoDevice with a reason; with one, Reported. Never a panic: gpus turns a
// panic into a QueryFailed, which this test rejects too.
func TestQueryRealDevice(t *testing.T) {
	t.Setenv(FakeDeviceEnv, "")
	t.Cleanup(func() {
		if err := Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	all := ListGPUs()
	if len(all) == 0 {
		t.Fatal("ListGPUs returned nothing; it must say why there is no device")
	}
	for _, dm := range append(all, QueryGPU()) {
		t.Log(dm)
		switch m := dm.(type) {
		case NoDevice:
			if m.Reason == "" {
				t.Error("NoDevice without a reason")
			}
		case Reported:
			if m.Total == 0 || m.Free > m.Total || m.Name == "" {
				t.Errorf("implausible report %+v", m)
			}
		default:
			t.Errorf("real query gave %v, want NoDevice or Reported", dm)
		}
	}
}

func TestQueryFake(t *testing.T) {
	tests := []struct {
		name  string
		value string
		check func(t *testing.T, dm DeviceMemory)
	}{
		{"reported", "reported:free=8192,total=16384,name=test GPU", func(t *testing.T, dm DeviceMemory) {
			if r, ok := dm.(Reported); !ok || r.Free != 8192<<20 || r.Total != 16384<<20 || r.Name != "test GPU" {
				t.Errorf("got %v", dm)
			}
		}},
		{"failed", "failed:ERROR_NO_PERMISSION", func(t *testing.T, dm DeviceMemory) {
			q, ok := dm.(QueryFailed)
			if !ok {
				t.Fatalf("got %v", dm)
			}
			if qe, ok := errors.AsType[*QueryError](q.Err); !ok || qe.Name != "ERROR_NO_PERMISSION" {
				t.Errorf("error %v does not carry the name ERROR_NO_PERMISSION", q.Err)
			}
		}},
		{"none", "none:simulated", func(t *testing.T, dm DeviceMemory) {
			if dm != (NoDevice{Reason: "simulated"}) {
				t.Errorf("got %v", dm)
			}
		}},
		{"malformed", "reported:free=8192", func(t *testing.T, dm DeviceMemory) {
			if q, ok := dm.(QueryFailed); !ok || !errors.Is(q.Err, ErrBadFakeDevice) || !strings.Contains(q.Err.Error(), `"reported:free=8192"`) {
				t.Errorf("got %v, want QueryFailed quoting the value", dm)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(FakeDeviceEnv, tt.value)
			tt.check(t, QueryGPU())
			all := ListGPUs()
			if len(all) != 1 {
				t.Fatalf("ListGPUs = %v, want the fake alone", all)
			}
			tt.check(t, all[0])
		})
	}
}

func TestReport(t *testing.T) {
	t.Setenv(FakeDeviceEnv, "reported:free=8192,total=16384")
	r := Collect()
	if r.FakeDevice != "reported:free=8192,total=16384" || len(r.GPUs) != 1 || r.Primary == nil {
		t.Fatalf("Collect = %+v", r)
	}
	if (r.Host == nil) == (r.HostError == "") {
		t.Errorf("want exactly one of Host and HostError, got %+v / %q", r.Host, r.HostError)
	}

	t.Run("json", func(t *testing.T) {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			FakeDevice string `json:"fake_device"`
			Primary    struct {
				Outcome string `json:"outcome"`
				Free    uint64 `json:"free_bytes"`
				Total   uint64 `json:"total_bytes"`
			} `json:"primary"`
			GPUs []map[string]any `json:"gpus"`
		}
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("%v in %s", err, data)
		}
		if back.FakeDevice != r.FakeDevice || back.Primary.Outcome != "reported" ||
			back.Primary.Free != 8192<<20 || back.Primary.Total != 16384<<20 ||
			len(back.GPUs) != 1 || back.GPUs[0]["kind"] != "fake" {
			t.Errorf("JSON %s read back as %+v", data, back)
		}
	})

	t.Run("text", func(t *testing.T) {
		var b strings.Builder
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			`simulated by MINFER_FAKE_DEVICE="reported:free=8192,total=16384"`,
			"fake MINFER_FAKE_DEVICE: 8192 MiB free of 16384 MiB (used 8192 MiB)\n",
			"used for planning: fake MINFER_FAKE_DEVICE: 8192 MiB free of 16384 MiB",
			"host: ",
		} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("text report\n%s\nlacks %q", b.String(), want)
			}
		}
	})

	t.Run("text write error", func(t *testing.T) {
		if err := r.WriteText(failingWriter{}); err == nil || err.Error() != "disk full" {
			t.Errorf("WriteText to a failing writer = %v, want its error", err)
		}
	})
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
