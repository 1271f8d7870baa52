package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/minfer/minfer/core/backend/cpu"
	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/ggtest"
)

// errDeviceFault is what the flaky device answers when it fails: the name
// a CUDA call gives for a lost or faulted context.
var errDeviceFault = errors.New("CUDA_ERROR_ILLEGAL_ADDRESS")

// flakyGPU is a CPU backend standing in for a device that fails on demand:
// the n-th call (counted from 1) of RegisterWeight, AllocBuffer or Compute
// fails; 0 never. Every later call works again (a transient fault).
type flakyGPU struct {
	*cpu.CPU
	failRegister, failAlloc, failCompute int64
	registers, allocs, computes          atomic.Int64
	closed                               atomic.Bool
}

func (f *flakyGPU) RegisterWeight(name string, t gguf.GGMLType, dims []int64, data []byte) error {
	if f.registers.Add(1) == f.failRegister {
		return errDeviceFault
	}
	return f.CPU.RegisterWeight(name, t, dims, data)
}

func (f *flakyGPU) AllocBuffer(size int64) (alloc.BufID, error) {
	if f.allocs.Add(1) == f.failAlloc {
		return 0, errDeviceFault
	}
	return f.CPU.AllocBuffer(size)
}

func (f *flakyGPU) Compute(ctx context.Context, nodes []*graph.Node) error {
	if f.computes.Add(1) == f.failCompute {
		return errDeviceFault
	}
	return f.CPU.Compute(ctx, nodes)
}

// fakeDevice is what MINFER_FAKE_DEVICE=spec makes the device report.
func fakeDevice(t *testing.T, spec string) func() devices.DeviceMemory {
	t.Helper()
	dm, err := devices.ParseFakeDevice(spec)
	if err != nil {
		t.Fatal(err)
	}
	return func() devices.DeviceMemory { return dm }
}

// TestDeviceFaultsAtEachStep: a device that fails when queried, planned,
// loaded, first allocated or in the middle of generation gives the
// documented outcome, a clean error naming the device's answer (or a
// refusal with the numbers), never a panic; and what comes after works: a
// CPU load after a failed one, and the next reply of a session whose
// device failed mid-generation, which equals a fresh CPU session's.
func TestDeviceFaultsAtEachStep(t *testing.T) {
	path := ggtest.Path(t, "models", "stories260K.gguf")
	opts := greedy()
	opts.MaxTokens = 8
	reply := func(s *Session) (string, error) {
		conv, _, err := s.Conversation()
		if err != nil {
			return "", err
		}
		text, _, err := conv.Complete(context.Background(), "Once upon a time", opts, func(chat.Event) {})
		return text, err
	}
	base, err := Load(context.Background(), path, cpuOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := reply(base)
	base.Close()
	if err != nil {
		t.Fatal(err)
	}
	// The CPU still works after whatever the device did.
	cpuAfter := func(t *testing.T) {
		t.Helper()
		s, err := Load(context.Background(), path, cpuOnly(), nil)
		if err != nil {
			t.Fatalf("CPU load after the fault: %v", err)
		}
		defer s.Close()
		if got, err := reply(s); err != nil || got != want {
			t.Fatalf("CPU reply after the fault: %q, %v; want %q", got, err, want)
		}
	}
	withFlaky := func(spec string, layers offload.Request, dev *flakyGPU) LoadOptions {
		o := cpuOnly()
		o.Device = fakeDevice(t, spec)
		o.GPULayers = layers
		o.DeviceBackend = dev
		return o
	}
	all := offload.Request{Layers: 6, Source: "test"} // every block + output
	auto := offload.Request{Auto: true}

	t.Run("query fails: auto refused naming the error", func(t *testing.T) {
		_, err := Load(context.Background(), path, withFlaky("failed:NVML_ERROR_GPU_IS_LOST", auto, &flakyGPU{CPU: cpu.NewNamed("FLAKY", 1)}), nil)
		if !errors.Is(err, offload.ErrDeviceQuery) || !strings.Contains(err.Error(), "NVML_ERROR_GPU_IS_LOST") {
			t.Fatalf("got %v, want %v naming the error", err, offload.ErrDeviceQuery)
		}
		cpuAfter(t)
	})
	t.Run("query fails: an explicit count loads, weights charged", func(t *testing.T) {
		dev := &flakyGPU{CPU: cpu.NewNamed("FLAKY", 1)}
		s, err := Load(context.Background(), path, withFlaky("failed:NVML_ERROR_GPU_IS_LOST", all, dev), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if got, err := reply(s); err != nil || got != want {
			t.Fatalf("reply %q, %v; want %q", got, err, want)
		}
	})
	t.Run("no device: auto runs on the CPU", func(t *testing.T) {
		s, err := Load(context.Background(), path, withFlaky("none:driver removed", auto, &flakyGPU{CPU: cpu.NewNamed("FLAKY", 1)}), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if s.Plan().DeviceBlocks() != 0 {
			t.Errorf("plan %v without a device", s.Plan())
		}
	})
	t.Run("plan over the budget: a refusal with the numbers", func(t *testing.T) {
		_, err := Load(context.Background(), path, withFlaky("reported:free=1,total=2", all, &flakyGPU{CPU: cpu.NewNamed("FLAKY", 1)}), nil)
		var r *alloc.Refusal
		if !errors.As(err, &r) || r.Budget <= 0 && r.Weights <= 0 {
			t.Fatalf("got %v, want a refusal", err)
		}
		cpuAfter(t)
	})
	for _, tc := range []struct {
		name string
		dev  *flakyGPU
		want string
	}{
		{"load: a weight does not register", &flakyGPU{CPU: cpu.NewNamed("FLAKY", 1), failRegister: 3}, "FLAKY"},
		{"first allocation fails", &flakyGPU{CPU: cpu.NewNamed("FLAKY", 1), failAlloc: 1}, "FLAKY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(context.Background(), path, withFlaky("reported:free=8192,total=16384", all, tc.dev), nil)
			if !errors.Is(err, errDeviceFault) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want the device's %v naming %s", err, errDeviceFault, tc.want)
			}
			cpuAfter(t)
		})
	}
	for _, at := range []int64{1, 2, 5, 8} {
		t.Run(fmt.Sprintf("mid generation: compute call %d fails", at), func(t *testing.T) {
			dev := &flakyGPU{CPU: cpu.NewNamed("FLAKY", 1), failCompute: at}
			s, err := Load(context.Background(), path, withFlaky("reported:free=8192,total=16384", all, dev), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			conv, _, err := s.Conversation()
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = conv.Complete(context.Background(), "Once upon a time", opts, func(chat.Event) {})
			if !errors.Is(err, errDeviceFault) || !strings.Contains(err.Error(), "FLAKY") {
				t.Fatalf("got %v, want %v naming the device", err, errDeviceFault)
			}
			t.Log(err)
			// The same session, the device working again: the next reply
			// is a fresh session's.
			got, _, err := conv.Complete(context.Background(), "Once upon a time", opts, func(chat.Event) {})
			if err != nil || got != want {
				t.Fatalf("reply after the fault: %q, %v; want %q", got, err, want)
			}
		})
	}
}
