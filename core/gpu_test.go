package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minfer/minfer/core/backend/cuda"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/coretest"
	"github.com/minfer/minfer/internal/ggtest"
)

// gpuDevice is the CUDA device answer, or a one-line skip where there is
// no usable CUDA driver (CI, this project's build machine).
func gpuDevice(t *testing.T) devices.Reported {
	t.Helper()
	if ok, line := cuda.Status(); !ok {
		t.Skip(line)
	}
	r, ok := QueryDevice().(devices.Reported)
	if !ok || r.Kind != devices.KindCUDA {
		t.Skipf("no CUDA device answer: %v", QueryDevice())
	}
	return r
}

func onGPU(dm devices.Reported, layers int, env map[string]string) LoadOptions {
	return LoadOptions{PlanOptions: PlanOptions{
		GPULayers: offload.Request{Layers: layers, Source: "test"},
		Device:    func() devices.DeviceMemory { return dm },
		Env:       func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	}}
}

// gpuRefModels: every model with references in models/, synth/, small/ and
// arch/.
func gpuRefModels(t *testing.T) []string {
	var out []string
	for _, sub := range []string{"models", "synth", "small", "arch"} {
		out = append(out, ggtest.Glob(t, sub, "*.ref.json")...)
	}
	return out
}

// gpuVsCPUBound is the NMSE the GPU's logits may have against the CPU
// backend's at every position. The kernels keep the CPU's float order
// where it matters (bench/results/2026-12-01-cudadec: every logit of every
// test model is the CPU's bit for bit): a float sum in another order moves
// a value by an ulp, the next activation quantization can then round it to
// another int8, and the logits of the quantized test models moved by up to
// 9e-4 NMSE, over llama.cpp's 1e-4 bound. The bound still admits the
// rounding noise of an F32/F16 model (≈3e-8 measured with reordered sums)
// and catches a wrong element, block or row.
const gpuVsCPUBound = 1e-8

// TestGPULogitsMatchLlamaCpp: every reference model at gpu-layers 0, 1,
// all and all+output: the logits are within gpuVsCPUBound of the CPU
// backend's and match llama.cpp's references within the CPU's bounds
// (where the CPU itself misses a reference bound, within 1.5× the CPU's
// own NMSE), with the three readers agreeing on the device.
// small/ references were computed a token at a time and are evaluated so
// (decode graphs, captured and replayed).
func TestGPULogitsMatchLlamaCpp(t *testing.T) {
	dm := gpuDevice(t)
	for _, refPath := range gpuRefModels(t) {
		ref := loadRef(t, refPath)
		dir := filepath.Dir(refPath)
		path := filepath.Join(dir, ref.Model)
		info, err := Inspect(path)
		if err != nil {
			t.Fatal(err)
		}
		eval := func(t *testing.T, s *Session, c coretest.RefCase) []float32 {
			t.Helper()
			if err := s.Rewind(0); err != nil {
				t.Fatal(err)
			}
			// As the reference was computed: one batch, or a token at a
			// time (decode graphs, captured and replayed).
			got, err := evalLike(s, ref, c.Tokens)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		worstOf := func(got, want []float32, n int) float64 {
			worst := 0.0
			for row := 0; row+ref.NVocab <= len(want) && row/ref.NVocab < n; row += ref.NVocab {
				worst = max(worst, nmse(got[row:row+ref.NVocab], want[row:row+ref.NVocab]))
			}
			return worst
		}
		// The CPU's logits and their distance to the references.
		host, err := Load(context.Background(), path, onGPU(dm, 0, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		var cpuLogits [][]float32
		var cpuRef []float64
		for _, c := range ref.Cases {
			l := eval(t, host, c)
			cpuLogits = append(cpuLogits, l)
			cpuRef = append(cpuRef, worstOf(l, readLogits(t, filepath.Join(dir, c.LogitsFile)), len(c.Tokens)))
		}
		host.Close()
		refBound := tolerance(ref.Model)
		if strings.Contains(ref.Model, "BF16") {
			refBound = 2e-5
		}
		nl := info.HParams.NLayer
		for _, gl := range []int{1, nl, nl + 1} {
			t.Run(fmt.Sprintf("%s/gpu%d", ref.Model, gl), func(t *testing.T) {
				s, err := Load(context.Background(), path, onGPU(dm, gl, nil), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				rep := s.OffloadReport()
				if s.Plan().GPULayers != gl || rep.Fallback != "" {
					t.Fatalf("plan %v, fallback %q", s.Plan(), rep.Fallback)
				}
				if !strings.HasPrefix(rep.Backend, "CUDA") {
					t.Fatalf("device backend %q", rep.Backend)
				}
				for ci, c := range ref.Cases {
					got := eval(t, s, c)
					want := readLogits(t, filepath.Join(dir, c.LogitsFile))
					vsCPU := worstOf(got, cpuLogits[ci], len(c.Tokens))
					differ := 0
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(cpuLogits[ci][i]) {
							differ++
						}
					}
					vsRef := worstOf(got, want, len(c.Tokens))
					bound := refBound
					if cpuRef[ci] > refBound {
						bound = 1.5 * cpuRef[ci]
					}
					t.Logf("case %d: %d of %d logits differ from the CPU's bits (worst-position NMSE %.3g); vs llama.cpp %.3g (bound %.3g; CPU %.3g)",
						ci, differ, len(got), vsCPU, vsRef, bound, cpuRef[ci])
					if vsCPU > gpuVsCPUBound || len(got) != len(cpuLogits[ci]) {
						t.Errorf("case %d: NMSE vs the CPU %.3g > %.0e (%d of %d logits differ from the CPU's bits)", ci, vsCPU, gpuVsCPUBound, differ, len(got))
					}
					if vsRef > bound {
						t.Errorf("case %d: NMSE vs llama.cpp %.3g > %.3g", ci, vsRef, bound)
					}
				}
				checkThreeReaders(t, s)
				mr := s.MemoryReport()
				if mr[1].WeightsBytes != s.View.DeviceWeights || rep.DeviceBytes != s.View.DeviceWeights {
					t.Errorf("device weights %d, report %d, plan %d", mr[1].WeightsBytes, rep.DeviceBytes, s.View.DeviceWeights)
				}
				if mr[1].FixedBytes <= 0 {
					t.Errorf("the CUDA context/modules/workspace were not charged: %+v", mr[1])
				}
			})
		}
	}
}

// checkThreeReaders: the loader, the builder's layer stamps and the
// scheduler put exactly the plan's blocks on the device.
func checkThreeReaders(t *testing.T, s *Session) {
	t.Helper()
	plan := s.Plan()
	for name, be := range s.where {
		want := plan.AllowsWeight(name)
		if strings.HasPrefix(name, "cache_") {
			var l int
			if _, err := fmtSscanLayer(name, &l); err != nil {
				t.Fatal(err)
			}
			want = plan.OnDevice(l)
		}
		if (be == 1) != want {
			t.Errorf("loader put %s on backend %d, plan says device=%v", name, be, want)
		}
	}
	g := s.cache.Latest()
	dev := s.bes[1].(graph.Capability)
	for _, n := range g.Nodes {
		if n.Op.IsLeaf() || n.Op == graph.OpView || n.Op == graph.OpCopy || n.Op == graph.OpStoreKV {
			continue
		}
		want := 0
		if n.Layer >= 0 && plan.OnDevice(n.Layer) || n.Layer == graph.Unblocked && plan.DeviceHoldsUnblocked() {
			want = 1
		}
		if want == 1 && !dev.SupportsNode(n) {
			t.Errorf("%s of a device block is not supported by %s: it falls back to the CPU", n, s.bes[1].Name())
			want = 0
		}
		if n.Backend != want {
			t.Errorf("%s on backend %d, plan says %d", n, n.Backend, want)
		}
	}
}

// TestGPUGreedyDecode: the reference greedy continuation decoded through
// the device's KV cache, token by token (captured decode graphs replayed).
func TestGPUGreedyDecode(t *testing.T) {
	dm := gpuDevice(t)
	refPath := ggtest.Path(t, "models", "stories260K.ref.json")
	ref := loadRef(t, refPath)
	path := filepath.Join(filepath.Dir(refPath), ref.Model)
	info, err := Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(context.Background(), path, onGPU(dm, info.HParams.NLayer+1, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for ci, c := range ref.Cases {
		s.Rewind(0)
		logits, err := s.Eval(context.Background(), c.Tokens, false)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range c.Greedy {
			if got := argmax(logits); got != want {
				t.Fatalf("case %d step %d: token %d, want %d", ci, i, got, want)
			}
			if logits, err = s.Eval(context.Background(), []int32{want}, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	dev := s.bes[1].(*cuda.Backend)
	st := dev.GraphStats()
	t.Logf("graph runs: %+v", st)
	if st.Replays == 0 {
		t.Errorf("no decode step was replayed from a captured graph: %+v", st)
	}
}

// TestGPUProgrammaticLaunchSameLogits: where the device launches with
// programmatic dependent launch, a prompt and a greedy continuation
// (captured decode graphs replayed) give the same logits bit for bit as
// with it off (MINFER_CUDA_PDL=0): the overlapped kernels wait for what
// they read.
func TestGPUProgrammaticLaunchSameLogits(t *testing.T) {
	dm := gpuDevice(t)
	for _, name := range []string{"synth-llama-small-Q4_K_M.gguf", "synth-llama-small-Q4_0.gguf"} {
		path := ggtest.Path(t, "small", name)
		info, err := Inspect(path)
		if err != nil {
			t.Fatal(err)
		}
		run := func(pdl string) (bool, [][]float32) {
			t.Setenv("MINFER_CUDA_PDL", pdl)
			s, err := Load(context.Background(), path, onGPU(dm, info.HParams.NLayer+1, nil), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			on := s.bes[1].(*cuda.Backend).ProgrammaticLaunch()
			return on, greedyLogits(t, s, 24)
		}
		on, with := run("1")
		off, without := run("0")
		if off {
			t.Fatal("MINFER_CUDA_PDL=0 left programmatic launch on")
		}
		if !on {
			t.Skipf("%s: no programmatic dependent launch on this device", dm.Name)
		}
		sameSteps(t, name, with, without, "with programmatic launch", "without")
		t.Logf("%s: %d steps identical", name, len(with))
	}
}

// greedyLogits evaluates the GPU tests' eight-token prompt and n greedy
// steps after it in s, and returns the logits of the prompt and of the
// first n-1 steps (copies).
func greedyLogits(t *testing.T, s *Session, n int) [][]float32 {
	t.Helper()
	var all [][]float32
	logits, err := s.Eval(context.Background(), []int32{1, 42, 7, 300, 5, 99, 12, 64}, false)
	for i := 0; i < n && err == nil; i++ {
		all = append(all, append([]float32(nil), logits...))
		logits, err = s.Eval(context.Background(), []int32{int32(argmax(logits))}, false)
	}
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestGPUInputBlockSameLogits: a prompt and a greedy continuation give
// the same logits bit for bit whether the decode steps' input writes ride
// in their captured graphs from the pinned input block (the default; with
// polled reads fencing the block, and with plain reads, whose synchronize
// frees it) or go through the ring before each run (MINFER_CUDA_INPUTS=
// ring): a replay reads each step's inputs, never an earlier step's.
func TestGPUInputBlockSameLogits(t *testing.T) {
	dm := gpuDevice(t)
	path := ggtest.Path(t, "small", "synth-llama-small-Q4_0.gguf")
	info, err := Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	// The queued next step (prelaunch.go) is off: its gated runs upload
	// their inputs through the ring before the gate (ComputeGated runs as
	// a plain request), so with it on the block would serve one step.
	t.Setenv("MINFER_PRELAUNCH", "0")
	run := func(inputs, pollRead string) [][]float32 {
		t.Setenv("MINFER_CUDA_INPUTS", inputs)
		t.Setenv("MINFER_CUDA_POLLREAD", pollRead)
		s, err := Load(context.Background(), path, onGPU(dm, info.HParams.NLayer+1, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		all := greedyLogits(t, s, 24)
		st := s.bes[1].(*cuda.Backend).GraphStats()
		if st.Replays == 0 {
			t.Fatalf("inputs %q, polled reads %q: no step replayed: %+v", inputs, pollRead, st)
		}
		if (st.BlockInputs > 0) != (inputs != "ring") {
			t.Fatalf("inputs %q, polled reads %q: %d runs with their inputs from the block: %+v", inputs, pollRead, st.BlockInputs, st)
		}
		return all
	}
	ring := run("ring", "")
	for _, pollRead := range []string{"", "0"} {
		block := run("", pollRead)
		sameSteps(t, fmt.Sprintf("polled reads %q", pollRead), block, ring, "from the input block", "through the ring")
	}
	t.Logf("%d steps identical", len(ring))
}

// TestGPUPlanOverBudgetIsRefusedByTheGate: a plan bigger than
// MINFER_GPU_MEM allows is refused by the E4 gate with its four numbers,
// before CUDA is asked for anything.
func TestGPUPlanOverBudgetIsRefusedByTheGate(t *testing.T) {
	dm := gpuDevice(t)
	path := ggtest.Path(t, "small", "synth-llama-small-F16.gguf")
	info, err := Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load(context.Background(), path, onGPU(dm, info.HParams.NLayer+1, map[string]string{offload.EnvGPUMem: "8"}), nil)
	var r *alloc.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("got %v, want the gate's refusal", err)
	}
	for _, w := range []string{"weights", "pooled", "request", "budget"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not name %s", err, w)
		}
	}
	if errors.Is(err, cuda.ErrOutOfMemory) {
		t.Errorf("refused by CUDA, not by the gate: %v", err)
	}
}

// TestGPUArchitectures: each arch/ file with every block and the output on
// the GPU gives the CPU's logits (within gpuVsCPUBound) and llama.cpp's within the
// reference bound, or — where the device cannot run a piece the blocks
// need (Gemma 2's soft-capped attention, expert mat-muls) — falls back to
// the CPU saying so.
func TestGPUArchitectures(t *testing.T) {
	dm := gpuDevice(t)
	for _, refPath := range ggtest.Glob(t, "arch", "*.ref.json") {
		ref := loadRef(t, refPath)
		path := filepath.Join(filepath.Dir(refPath), ref.Model)
		t.Run(ref.Model, func(t *testing.T) {
			host, err := Load(context.Background(), path, onGPU(dm, 0, nil), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer host.Close()
			nl := host.H.NLayer
			s, err := Load(context.Background(), path, onGPU(dm, nl+1, nil), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if fb := s.OffloadReport().Fallback; fb != "" {
				t.Logf("fell back to the CPU: %s", fb)
				if host.H.AttnSoftCap == 0 && host.H.NExpert == 0 {
					t.Errorf("unexpected fallback: %s", fb)
				}
			}
			for ci, c := range ref.Cases {
				want := readLogits(t, filepath.Join(filepath.Dir(refPath), c.LogitsFile))
				cpu, err := evalLike(host.rewound(t), ref, c.Tokens)
				if err != nil {
					t.Fatal(err)
				}
				gpu, err := evalLike(s.rewound(t), ref, c.Tokens)
				if err != nil {
					t.Fatal(err)
				}
				worst, worstRef := 0.0, 0.0
				for p := 0; p < len(c.Tokens); p++ {
					r := p * ref.NVocab
					worst = max(worst, nmse(gpu[r:r+ref.NVocab], cpu[r:r+ref.NVocab]))
					worstRef = max(worstRef, nmse(gpu[r:r+ref.NVocab], want[r:r+ref.NVocab]))
				}
				t.Logf("case %d: GPU vs CPU worst %.3g, vs llama.cpp worst %.3g", ci, worst, worstRef)
				if worst > gpuVsCPUBound || worstRef > tolerance(ref.Model) {
					t.Errorf("case %d: GPU vs CPU %.3g, vs llama.cpp %.3g", ci, worst, worstRef)
				}
			}
		})
	}
}

// rewound is the session at position 0 (test helper).
func (s *Session) rewound(t *testing.T) *Session {
	t.Helper()
	if err := s.Rewind(0); err != nil {
		t.Fatal(err)
	}
	return s
}
