package core

import (
	"context"
	"testing"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/ggtest"
)

// TestDecodeStepAllocatesNothingOnCPU: once a decode graph is built and
// placed, running its nodes on the CPU backend (every matmul, norm, rope,
// attention and SwiGLU of the step, across the worker pool) allocates
// nothing: the ops reuse task values and per-worker scratch, and the pool
// hands out work without channels or closures.
func TestDecodeStepAllocatesNothingOnCPU(t *testing.T) {
	for _, name := range []string{"synth-llama-Q4_0.gguf", "synth-llama-Q4_K_M.gguf"} {
		t.Run(name, func(t *testing.T) {
			s, p, g := decodeStepGraph(t, name, 2)
			defer s.Close()
			kvLookup := func(name string) (alloc.BufRef, bool) { r, ok := s.kv[name]; return r, ok }
			if err := graph.Allocate(g, s.ga, kvLookup); err != nil {
				t.Fatal(err)
			}
			defer graph.Release(g, s.ga)
			if err := s.fillInputs(g, []int32{6}, p.KVLen, s.nPast); err != nil {
				t.Fatal(err)
			}
			var nodes []*graph.Node
			for _, n := range g.Nodes {
				if !n.Op.IsLeaf() && n.Op != graph.OpView && n.Op != graph.OpCopy {
					nodes = append(nodes, n)
				}
			}
			if err := s.cpu.Compute(context.Background(), nodes); err != nil { // warm-up: scratch grows here
				t.Fatal(err)
			}
			// AllocsPerRun counts the whole process's allocations, so a
			// goroutine another test left running can add one now and
			// then (seen once, under -race in CI): a step that allocates
			// does so in every one of three measurements.
			var a float64
			for try := 0; try < 3; try++ {
				if a = testing.AllocsPerRun(5, func() {
					if err := s.cpu.Compute(context.Background(), nodes); err != nil {
						t.Fatal(err)
					}
				}); a == 0 {
					break
				}
			}
			if a != 0 {
				t.Errorf("a decode step on the CPU backend allocates %v times (in each of three measurements)", a)
			}
		})
	}
}

// BenchmarkDecodeStepHost is the host's part of a decode step on the
// synth model's graph outside the compute: finding the cached graph,
// placing its buffers, writing its inputs, releasing (what a device step
// adds before and after its launch).
func BenchmarkDecodeStepHost(b *testing.B) {
	s, p, g0 := decodeStepGraph(b, "synth-llama-Q4_K_M.gguf", 0)
	defer s.Close()
	build := func(graph.Params) (*graph.Graph, error) { return g0, nil }
	kvLookup := func(name string) (alloc.BufRef, bool) { r, ok := s.kv[name]; return r, ok }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g, err := s.cache.Get(p, build)
		if err != nil {
			b.Fatal(err)
		}
		if err := graph.Allocate(g, s.ga, kvLookup); err != nil {
			b.Fatal(err)
		}
		if err := s.fillInputs(g, []int32{6}, p.KVLen, s.nPast); err != nil {
			b.Fatal(err)
		}
		graph.Release(g, s.ga)
	}
}

// decodeStepGraph loads a synth model on the CPU (threads 0: the default),
// evaluates a five-token prompt (so that attention has a history) and
// builds the next decode step's graph, with its backends assigned.
func decodeStepGraph(t testing.TB, name string, threads int) (*Session, graph.Params, *graph.Graph) {
	t.Helper()
	opts := cpuOnly()
	opts.Threads = threads
	s, err := Load(context.Background(), ggtest.Path(t, "synth", name), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Eval(context.Background(), []int32{1, 2, 3, 4, 5}, false); err != nil {
		s.Close()
		t.Fatal(err)
	}
	p := graph.Params{Tokens: 1, KVLen: s.kvClass(s.nPast + 1), GPULayers: s.plan.GPULayers, Arch: s.H.Arch}
	g, err := buildGraph(s.arch, s.H, p, s.nCtx, s.KVType, s.file.Tensor, s.fuse)
	if err == nil {
		err = graph.AssignBackends(g, s.caps, s.plan, s)
	}
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	return s, p, g
}

// TestDecodeSessionStepAllocatesNothingOnCPU: a whole decode step of a
// session on the CPU — the cached graph found, its buffers placed, its
// inputs written, its runs executed (backend.Execute), its logits read into
// the caller's slice (EvalInto), the buffers released — allocates nothing
// once warm. (Execute's run slice, grown from nil at every step, was seven
// allocations a step of the synth models; TestDecodeStepAllocatesNothingOnCPU
// covers only the backend's Compute.) The one thing left out is the
// file-change check before each step (checkFile: os.Stat of the model
// file, two allocations for its FileInfo), a system call the step makes
// on purpose; the test turns it off.
func TestDecodeSessionStepAllocatesNothingOnCPU(t *testing.T) {
	for _, name := range []string{"synth-llama-Q4_0.gguf", "synth-llama-Q4_K_M.gguf"} {
		t.Run(name, func(t *testing.T) {
			opts := cpuOnly()
			opts.Threads = 2
			s, err := Load(context.Background(), ggtest.Path(t, "synth", name), opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Eval(context.Background(), []int32{1, 2, 3, 4, 5}, false); err != nil {
				t.Fatal(err)
			}
			s.stamp = nil // no file-change check (above)
			tok := []int32{6}
			var dst []float32
			step := func() {
				if dst, err = s.EvalInto(context.Background(), tok, dst); err != nil {
					t.Fatal(err)
				}
			}
			step() // warm-up: the step's graph, scratch and the logits slice grow here
			var a float64
			for try := 0; try < 3; try++ {
				if a = testing.AllocsPerRun(5, step); a == 0 {
					break
				}
			}
			if a != 0 {
				t.Errorf("a decode step of the session allocates %v times (in each of three measurements)", a)
			}
		})
	}
}
