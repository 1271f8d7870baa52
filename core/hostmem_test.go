package core

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/ggtest"
)

// TestAbsurdContextRefusedInsideAContainer: a machine with 48 GiB
// available, in a cgroup v2 limited to 1 GiB of which 256 MiB are in use.
// MemAvailable alone would let a 1 GiB KV cache through, and the kernel
// would kill the process; the gate refuses it with the numbers, the budget
// being the weights plus ¾ of the 768 MiB the cgroup has left.
func TestAbsurdContextRefusedInsideAContainer(t *testing.T) {
	root := fstest.MapFS{
		"proc/meminfo":                 &fstest.MapFile{Data: []byte("MemTotal: 67108864 kB\nMemFree: 1 kB\nMemAvailable: 50331648 kB\n")},
		"proc/self/cgroup":             &fstest.MapFile{Data: []byte("0::/\n")},
		"sys/fs/cgroup/memory.max":     &fstest.MapFile{Data: []byte("1073741824\n")},
		"sys/fs/cgroup/memory.current": &fstest.MapFile{Data: []byte("268435456\n")},
	}
	o := cpuOnly()
	o.Ctx = 1 << 20 // a 1 GiB KV cache
	o.HostMemory = func() (devices.HostMem, error) { return devices.HostMemoryFrom(root) }
	hm, err := o.HostMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Log(hm)
	path := ggtest.Path(t, "synth", "synth-llama-Q8_0.gguf")
	info, err := Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	// Mapped weights are charged but cost no memory: the budget is them
	// plus ¾ of 768 MiB. Copied (auto: the small model takes less than
	// half of the 768 MiB), they are charged against the ¾ alone.
	for _, c := range []struct {
		mode string
		want int64
	}{{"map", info.TensorBytes + 576<<20}, {"auto", 576 << 20}, {"copy", 576 << 20}} {
		o.CPUWeights = c.mode
		_, err = Load(context.Background(), path, o, nil)
		var r *alloc.Refusal
		if !errors.As(err, &r) {
			t.Fatalf("%s: got %v, want a refusal", c.mode, err)
		}
		if r.Budget != c.want {
			t.Errorf("%s: budget %d, want %d", c.mode, r.Budget, c.want)
		}
		t.Log(c.mode, r)
	}
}

// TestCPUWeightsChoice: auto copies the CPU's weights when they take at
// most half of the host's available memory and maps them otherwise (or
// when the host does not say); copy and map are obeyed; anything else is
// an error naming the choices.
func TestCPUWeightsChoice(t *testing.T) {
	hm := devices.HostMem{Available: 1000 << 20, Source: "test"}
	for _, c := range []struct {
		mode  string
		bytes int64
		hm    devices.HostMem
		hmErr error
		copyW bool
		bad   bool
	}{
		{"", 500 << 20, hm, nil, true, false},
		{"auto", 500 << 20, hm, nil, true, false},
		{"auto", 500<<20 + 1, hm, nil, false, false},
		{"auto", 1, devices.HostMem{}, nil, false, false},
		{"auto", 1, hm, errors.New("no answer"), false, false},
		{"copy", 900 << 20, hm, nil, true, false},
		{"copy", 1, hm, errors.New("no answer"), true, false},
		{"map", 1, hm, nil, false, false},
		{"mmap", 1, hm, nil, false, true},
	} {
		got, why, err := cpuWeightsChoice(c.mode, c.bytes, c.hm, c.hmErr)
		if (err != nil) != c.bad || got != c.copyW || (err == nil && why == "") {
			t.Errorf("cpuWeightsChoice(%q, %d, %v, %v) = %v, %q, %v; want copy %v, error %v", c.mode, c.bytes, c.hm.Available, c.hmErr, got, why, err, c.copyW, c.bad)
		}
	}
}

// TestCopiedWeightsAreCharged: with copies asked for on a host whose
// available memory cannot hold them, the load is refused by the host gate
// with the numbers, naming the copied weight — before the copy is made.
func TestCopiedWeightsAreCharged(t *testing.T) {
	o := cpuOnly()
	o.CPUWeights = "copy"
	o.Ctx = 64
	o.HostMemory = func() (devices.HostMem, error) {
		return devices.HostMem{Available: 4 << 20, Total: 8 << 20, Source: "test"}, nil
	}
	path := ggtest.Path(t, "synth", "synth-llama-Q8_0.gguf")
	_, err := Load(context.Background(), path, o, nil)
	var r *alloc.Refusal
	if !errors.As(err, &r) || !strings.Contains(err.Error(), "copied into memory") {
		t.Fatalf("got %v, want a refusal of a copied weight", err)
	}
	if r.Budget != 3<<20 {
		t.Errorf("budget %d, want ¾ of 4 MiB", r.Budget)
	}
	// Mapped, the same weights load (and the report says how they are held).
	o.CPUWeights = "map"
	s, err := Load(context.Background(), path, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rep := s.OffloadReport().String(); !strings.Contains(rep, "CPU weights: mapped from the file") {
		t.Errorf("report:\n%s", rep)
	}
}
