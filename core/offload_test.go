package core

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/core/backend/cpu"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/model"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/ggtest"
)

// fakeGPU is a second CPU backend standing in for a device: the loader,
// the builder's layer stamps and the scheduler treat it as one, so the
// placement, assignment and staging paths run for real.
type fakeGPU struct {
	*cpu.CPU
	refuse gguf.GGMLType // a weight type it claims not to support (0: none)
}

func (f fakeGPU) SupportsNode(n *graph.Node) bool {
	for _, s := range n.Src {
		if s != nil && f.refuse != 0 && s.Type == f.refuse {
			return false
		}
	}
	return f.CPU.SupportsNode(n)
}

// newFakeGPU returns a stand-in device the test closes (an injected
// backend stays the caller's).
func newFakeGPU(t testing.TB, threads int, refuse gguf.GGMLType) fakeGPU {
	c := cpu.NewNamed("FAKEGPU", threads)
	t.Cleanup(func() { c.Close() })
	return fakeGPU{CPU: c, refuse: refuse}
}

func withDevice(gpuLayers int, dev fakeGPU) LoadOptions {
	o := cpuOnly()
	o.Device = func() devices.DeviceMemory {
		return devices.Reported{Kind: devices.KindCUDA, Name: "Fake GPU", Free: 8 << 30, Total: 8 << 30}
	}
	o.GPULayers = offload.Request{Layers: gpuLayers, Source: "test"}
	o.DeviceBackend = dev
	return o
}

// TestThreeReadersAgreeOnOnePlan: the loader registers a tensor on the
// device only when the plan allows it, the builder stamps each node with its
// block, and the scheduler offers the device only for blocks in the plan.
// Every split gives the same logits as the CPU alone.
func TestThreeReadersAgreeOnOnePlan(t *testing.T) {
	// A dense llama, a mixture of experts, and Gemma 3's sliding-window
	// blocks (KV rings) next to global ones.
	for _, m := range []struct {
		dir, file string
		toks      []int32
	}{
		{"synth", "synth-llama-Q8_0.gguf", []int32{1, 450, 4996, 17354, 1701, 29916}},
		{"arch", "synth-llama-moe-Q8_0.gguf", []int32{1, 45, 496, 173, 170, 299, 7, 8, 9, 10}},
		{"arch", "synth-gemma3-Q8_0.gguf", []int32{1, 45, 496, 173, 170, 299, 7, 8, 9, 10, 11, 12}},
	} {
		t.Run(m.file, func(t *testing.T) { threeReaders(t, ggtest.Path(t, m.dir, m.file), m.toks) })
	}
}

func threeReaders(t *testing.T, path string, toks []int32) {
	base, err := Load(context.Background(), path, cpuOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	want, err := base.Eval(context.Background(), toks, true)
	if err != nil {
		t.Fatal(err)
	}
	// Token by token (decode graphs: the fused forms' one-mat-vec path).
	wantSteps := evalSteps(t, base, toks)
	nl := base.H.NLayer
	seen := map[int]bool{}
	for _, n := range []int{0, 1, nl / 2, nl, nl + 1} {
		if seen[n] {
			continue
		}
		seen[n] = true
		t.Run(strings.ReplaceAll(offload.NewPlan(n, nl).String(), "/", " of "), func(t *testing.T) {
			s, err := Load(context.Background(), path, withDevice(n, newFakeGPU(t, 2, 0)), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			plan := s.Plan()
			if plan.GPULayers != n || s.OffloadReport().Fallback != "" {
				t.Fatalf("plan %v, fallback %q; want %d GPU layers", plan, s.OffloadReport().Fallback, n)
			}
			got, err := s.Eval(context.Background(), toks, true)
			if err != nil {
				t.Fatal(err)
			}
			if e := nmse(got, want); e != 0 {
				t.Errorf("logits differ from CPU-only: NMSE %.3g", e)
			}
			// (a) the loader
			for name, be := range s.where {
				layer := -1
				if b, ok := offload.BlockOf(name); ok {
					layer = b
				} else if strings.HasPrefix(name, "cache_") {
					var l int
					if _, err := fmtSscanLayer(name, &l); err == nil {
						layer = l
					}
				}
				onDev := be == 1
				wantDev := plan.AllowsWeight(name)
				if strings.HasPrefix(name, "cache_") {
					wantDev = plan.OnDevice(layer)
				}
				if onDev != wantDev {
					t.Errorf("loader put %s on backend %d, plan says device=%v", name, be, wantDev)
				}
			}
			// (b) the builder and (c) the scheduler
			g := s.cache.Latest()
			for _, node := range g.Nodes {
				if node.Op.IsLeaf() || node.Op == graph.OpView || node.Op == graph.OpCopy || node.Op == graph.OpStoreKV {
					continue
				}
				wantBE := 0
				if node.Layer >= 0 && plan.OnDevice(node.Layer) || node.Layer == graph.Unblocked && plan.DeviceHoldsUnblocked() {
					wantBE = 1
				}
				if node.Backend != wantBE {
					t.Errorf("%s assigned to backend %d, plan says %d", node, node.Backend, wantBE)
				}
			}
			rep := s.MemoryReport()
			if n > 0 {
				if len(rep) != 2 {
					t.Fatalf("%d backends in the memory report, want 2", len(rep))
				}
				if rep[1].WeightsBytes != s.View.DeviceWeights {
					t.Errorf("device registered %d weight bytes, the plan charged %d", rep[1].WeightsBytes, s.View.DeviceWeights)
				}
				// The gate charged the KV cache the plan charged (sliding
				// blocks: their rings only).
				if rep[1].PersistentBytes != s.View.DeviceKV || rep[0].PersistentBytes != s.View.HostKV {
					t.Errorf("KV cache: device %d, host %d bytes allocated; the plan charged %d, %d", rep[1].PersistentBytes, rep[0].PersistentBytes, s.View.DeviceKV, s.View.HostKV)
				}
				if s.OffloadReport().DeviceBytes != s.View.DeviceWeights {
					t.Errorf("offload report says %d device bytes, plan %d", s.OffloadReport().DeviceBytes, s.View.DeviceWeights)
				}
			}
			// Staging copies exist exactly when the graph crosses backends.
			copies := 0
			for _, node := range g.Nodes {
				if node.Op == graph.OpCopy {
					copies++
				}
			}
			if crosses := n > 0 && n <= nl; crosses != (copies > 0) {
				t.Errorf("%d staging copies with %d GPU layers", copies, n)
			}
			checkFusedForms(t, s)
			for i, step := range evalSteps(t, s, toks) {
				if e := nmse(step, wantSteps[i]); e != 0 {
					t.Errorf("decode step %d: logits differ from CPU-only: NMSE %.3g", i, e)
				}
			}
			// The last decode graph reads each device block's fused forms
			// with one mat-vec.
			fusedReads := map[string]bool{}
			for _, node := range s.cache.Latest().Nodes {
				if node.Op == graph.OpMatMul && node.Src[0].Op == graph.OpWeight {
					fusedReads[node.Src[0].Weight] = true
				}
			}
			for name, be := range s.where {
				if isFusedName(name) && be == 1 && !fusedReads[name] {
					t.Errorf("the decode graph does not read %s with one mat-mul", name)
				}
			}
		})
	}
}

// evalSteps rewinds s and evaluates toks one at a time, returning each
// step's logits.
func evalSteps(t *testing.T, s *Session, toks []int32) [][]float32 {
	t.Helper()
	if err := s.Rewind(0); err != nil {
		t.Fatal(err)
	}
	var out [][]float32
	for _, tok := range toks {
		l, err := s.Eval(context.Background(), []int32{tok}, false)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, append([]float32(nil), l...))
	}
	return out
}

func isFusedName(name string) bool {
	return strings.HasSuffix(name, ".attn_qkv.weight") || strings.HasSuffix(name, ".ffn_gu.weight")
}

// checkFusedForms: every device block whose Q, K, V (gate, up) share a
// type and a row length holds them as one fused tensor and not the parts;
// every CPU block holds the parts and no fused tensor.
func checkFusedForms(t *testing.T, s *Session) {
	t.Helper()
	plan := s.Plan()
	for il := 0; il < s.H.NLayer; il++ {
		for _, f := range model.FusionsOf(s.arch, s.H, s.file.Tensor, il) {
			be, fusedHeld := s.where[f.Name]
			if plan.OnDevice(il) != (fusedHeld && be == 1) {
				t.Errorf("block %d (device=%v): fused %s held=%v on backend %d", il, plan.OnDevice(il), f.Name, fusedHeld, be)
			}
			for _, p := range f.Parts {
				pbe, held := s.where[p]
				if plan.OnDevice(il) == held || held && pbe != 0 {
					t.Errorf("block %d (device=%v): part %s held=%v on backend %d", il, plan.OnDevice(il), p, held, pbe)
				}
			}
		}
	}
}

func fmtSscanLayer(name string, l *int) (int, error) {
	i := strings.LastIndex(name, ".l")
	return fmtSscan(name[i+2:], l)
}

// TestUnusableDeviceWeightsFallBackToCPU: a device that lacks a planned
// weight's type makes the load drop to CPU-only, saying why.
func TestUnusableDeviceWeightsFallBackToCPU(t *testing.T) {
	path := ggtest.Path(t, "synth", "synth-llama-Q4_K_M.gguf")
	s, err := Load(context.Background(), path, withDevice(2, newFakeGPU(t, 1, gguf.TypeQ6_K)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.OffloadReport()
	if s.Plan().GPULayers != 0 || r.Plan.GPULayers != 2 || !strings.Contains(r.Fallback, "Q6_K") || !strings.Contains(r.String(), "CPU") {
		t.Errorf("report %+v, want a CPU-only fallback naming Q6_K", r)
	}
	if len(s.MemoryReport()) != 1 {
		t.Errorf("fallback kept %d backends", len(s.MemoryReport()))
	}
}

// TestNoDeviceBackendFallsBackWithReason: without a compute backend for the
// device's kind, a GPU plan runs on the CPU and the report says so.
func TestNoDeviceBackendFallsBackWithReason(t *testing.T) {
	o := withDevice(1, fakeGPU{})
	o.DeviceBackend = nil
	o.Device = func() devices.DeviceMemory {
		return devices.Reported{Kind: devices.KindMetal, Name: "Apple M9", Free: 8 << 30, Total: 8 << 30}
	}
	s, err := Load(context.Background(), ggtest.Path(t, "models", "stories260K.gguf"), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r := s.OffloadReport(); !strings.HasPrefix(r.Fallback, "no GPU compute backend for Metal") || s.Plan().GPULayers != 0 || r.Plan.GPULayers != 1 {
		t.Errorf("report %+v", r)
	}
}

// TestRegisteredBackendIsOpenedAndOwned: with no injected backend the load
// opens the one registered for the device's kind, runs the plan on it, and
// closes it with the session.
func TestRegisteredBackendIsOpenedAndOwned(t *testing.T) {
	const kind devices.Kind = "test-registry"
	var opened []*closeCounter
	backend.Register(kind, backend.Driver{Name: "TESTDEV", Open: func(dm devices.DeviceMemory) (backend.Backend, error) {
		c := &closeCounter{CPU: cpu.NewNamed("TESTDEV", 1)}
		opened = append(opened, c)
		return c, nil
	}})
	o := withDevice(1, fakeGPU{})
	o.DeviceBackend = nil
	o.Device = func() devices.DeviceMemory {
		return devices.Reported{Kind: kind, Name: "Test device", Free: 8 << 30, Total: 8 << 30}
	}
	s, err := Load(context.Background(), ggtest.Path(t, "models", "stories260K.gguf"), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.OffloadReport(); r.Fallback != "" || r.Backend != "TESTDEV" || s.Plan().GPULayers != 1 {
		t.Errorf("report %+v", r)
	}
	if _, err := s.Eval(context.Background(), []int32{1, 403}, false); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if len(opened) != 1 || opened[0].closed != 1 {
		t.Errorf("opened %d backends; closes %v", len(opened), opened)
	}

	// A registered backend that cannot run here is a fallback with its reason.
	backend.Register(kind, backend.Driver{Name: "TESTDEV", Open: func(devices.DeviceMemory) (backend.Backend, error) {
		return nil, fmt.Errorf("%w: libtest.so.1 not found", backend.ErrUnusable)
	}})
	s, err = Load(context.Background(), ggtest.Path(t, "models", "stories260K.gguf"), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r := s.OffloadReport(); !strings.Contains(r.Fallback, "libtest.so.1 not found") || s.Plan().GPULayers != 0 {
		t.Errorf("report %+v", r)
	}
}

type closeCounter struct {
	*cpu.CPU
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return c.CPU.Close() }

func fmtSscan(s string, l *int) (int, error) { return fmt.Sscan(s, l) }

// memGPU is a stand-in device that answers the memory question, as CUDA's
// cuMemGetInfo does.
type memGPU struct {
	fakeGPU
	free, total uint64
}

func (m memGPU) MemInfo() (free, total uint64, err error) { return m.free, m.total, nil }

// TestOffloadReportShowsMeasuredDeviceMemory: a device that measures its
// memory has its answer, taken after the load, in the offload report.
func TestOffloadReportShowsMeasuredDeviceMemory(t *testing.T) {
	path := ggtest.Path(t, "synth", "synth-llama-Q8_0.gguf")
	o := withDevice(1, newFakeGPU(t, 1, 0))
	o.DeviceBackend = memGPU{fakeGPU: o.DeviceBackend.(fakeGPU), free: 3 << 30, total: 8 << 30}
	s, err := Load(context.Background(), path, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep := s.OffloadReport()
	if rep.DeviceFree != 3<<30 || rep.DeviceTotal != 8<<30 {
		t.Fatalf("report free %d total %d, want the device's answer", rep.DeviceFree, rep.DeviceTotal)
	}
	if !strings.Contains(rep.String(), "5 120.0 MiB in use of 8 192.0 MiB (measured by the device)") {
		t.Errorf("report:\n%s", rep)
	}
}
