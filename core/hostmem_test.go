package core

import (
	"context"
	"errors"
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
	_, err = Load(context.Background(), path, o, nil)
	var r *alloc.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("got %v, want a refusal", err)
	}
	info, err := Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := info.TensorBytes + 576<<20; r.Budget != want {
		t.Errorf("budget %d, want the weights + ¾ of 768 MiB = %d", r.Budget, want)
	}
	t.Log(r)
}
