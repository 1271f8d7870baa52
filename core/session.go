package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"unsafe"

	"github.com/minfer/minfer/core/alloc"
	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/core/backend/cpu"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/model"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/core/tokenizer"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/gguf"
)

// LoadOptions are PlanOptions plus what only a load needs.
type LoadOptions struct {
	PlanOptions
	Threads int // CPU worker threads; 0 = all cores
	// Logf receives once-only warnings (a failed device query).
	Logf func(format string, args ...any)
	// DeviceBackend runs the plan's device blocks. Nil means none is
	// available in this build (a GPU plan then falls back to the CPU with
	// the reason in the OffloadReport). Tests pass a second CPU backend
	// standing in for a device, exercising the same placement, assignment
	// and staging paths a GPU uses.
	DeviceBackend backend.Backend
	// HostMemory answers how much memory the host has; nil means
	// devices.HostMemory.
	HostMemory func() (devices.HostMem, error)
}

// Progress reports load progress: done of total weight bytes registered.
type Progress func(done, total int64)

// ErrNoDeviceBackend is the fallback reason when blocks were planned for a
// device that Minfer cannot compute on yet.
var ErrNoDeviceBackend = errors.New("no GPU compute backend in this build: every block runs on the CPU")

// Session is a loaded model with its KV cache. It is owned by one goroutine
// at a time (the UI and CLI give it to a worker).
type Session struct {
	Info   *ModelInfo
	View   *PlanView
	H      model.HParams
	NCtx   int
	KVType gguf.GGMLType

	file   *gguf.File
	arch   model.Arch
	cpu    *cpu.CPU
	bes    []backend.Backend
	caps   []graph.Capability
	ga     *alloc.GraphAllocator
	cache  graph.Cache
	plan   offload.Plan
	report offload.Report
	kv     map[string]alloc.BufRef
	where  map[string]int
	nPast  int
	tok    *tokenizer.Tokenizer

	// stamp is the file as it was mapped; broken is set once the file was
	// seen to change (see checkFile and guarded).
	stamp  os.FileInfo
	broken error
}

// Load maps the file, registers every weight where the plan says, places
// the KV cache, and returns a ready session. It checks ctx between tensors.
func Load(ctx context.Context, path string, opts LoadOptions, progress Progress) (*Session, error) {
	info, err := Inspect(path)
	if err != nil {
		return nil, err
	}
	if info.Problem != "" {
		return nil, fmt.Errorf("core: cannot load %s: %s", info.Name, info.Problem)
	}
	view, err := Plan(info, opts.PlanOptions)
	if err != nil {
		return nil, err
	}
	if view.Refusal != nil {
		return nil, view.Refusal
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	s := &Session{Info: info, View: view, H: *info.HParams, NCtx: view.Ctx, KVType: view.KVType, file: f,
		kv: map[string]alloc.BufRef{}, where: map[string]int{}}
	if s.stamp, err = os.Stat(path); err != nil {
		s.Close()
		return nil, fmt.Errorf("core: %w", err)
	}
	// A device backend copies the weights it holds: that reads the mapping.
	if err := s.guarded(func() error { return s.load(ctx, opts, progress) }); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Session) load(ctx context.Context, opts LoadOptions, progress Progress) error {
	var err error
	if s.arch, err = model.Lookup(s.Info.Arch); err != nil {
		return err
	}
	s.cpu = cpu.New(opts.Threads)
	s.bes = []backend.Backend{s.cpu}
	s.caps = []graph.Capability{s.cpu}
	s.ga = alloc.NewGraphAllocator()
	s.ga.Logf = opts.Logf
	// The CPU refuses what the host cannot hold: everything beyond the
	// weights (which are mapped, not copied) gets ¾ of available memory.
	cpuBudget := alloc.Unlimited("host memory unknown")
	hostMem := opts.HostMemory
	if hostMem == nil {
		hostMem = devices.HostMemory
	}
	if hm, err := hostMem(); err == nil && hm.Available > 0 {
		cpuBudget = alloc.Limit(s.Info.TensorBytes+int64(hm.Available-hm.Available/4),
			fmt.Sprintf("mapped weights + ¾ of %s available host memory (%s)", alloc.MiB(int64(hm.Available)), hm.Source))
	}
	s.ga.AddBackend(s.cpu, cpuBudget)

	s.plan = s.View.Plan
	s.report = offload.Report{Plan: s.plan, Note: s.View.Note}
	wantsDevice := s.plan.DeviceBlocks() > 0 || s.plan.DeviceHoldsUnblocked()
	if wantsDevice {
		s.report.DeviceName = deviceLabel(s.View.Device)
		if reason := s.deviceUnusable(opts.DeviceBackend); reason != "" {
			// The plan passed the device gate but cannot run there: say so
			// and run everything on the CPU. The report keeps the plan that
			// was asked for; Plan() is what runs.
			s.report.Fallback = reason
			s.plan = offload.NewPlan(0, s.plan.NLayers)
			wantsDevice = false
		}
	}
	if wantsDevice {
		dev := opts.DeviceBackend
		s.bes = append(s.bes, dev)
		s.caps = append(s.caps, dev)
		s.ga.AddBackend(dev, s.View.GateBudget)
		s.report.Backend = dev.Name()
	}

	specs := s.arch.Tensors(s.H)
	var total, done int64
	for _, sp := range specs {
		if ti, ok := s.file.Tensor(sp.Name); ok {
			total += ti.NBytes()
		}
	}
	for _, sp := range specs {
		if err := ctx.Err(); err != nil {
			return err
		}
		ti, ok := s.file.Tensor(sp.Name)
		if !ok {
			continue
		}
		data, err := s.file.TensorData(ti)
		if err != nil {
			return err
		}
		be := 0
		if len(s.bes) > 1 && s.plan.AllowsWeight(ti.Name) {
			be = 1
		}
		if err := s.bes[be].RegisterWeight(ti.Name, ti.Type, ti.Dims, data); err != nil {
			return fmt.Errorf("core: %s: registering %q: %w", s.bes[be].Name(), ti.Name, err)
		}
		s.where[ti.Name] = be
		done += ti.NBytes()
		if progress != nil {
			progress(done, total)
		}
	}
	if len(s.bes) > 1 {
		s.report.DeviceBytes = s.bes[1].WeightsBytes()
	}
	s.report.HostBytes = s.cpu.WeightsBytes()
	// KV cache: one persistent region per layer for K and for V, on the
	// backend of that layer.
	for il := 0; il < s.H.NLayer; il++ {
		be := 0
		if len(s.bes) > 1 && s.plan.OnDevice(il) {
			be = 1
		}
		for _, kind := range []string{"k", "v"} {
			name := model.KVName(kind, il)
			rb, _ := s.KVType.RowBytes(int64(s.H.KVRow()))
			ref, err := s.ga.AllocPersistent(be, rb*int64(s.NCtx), fmt.Sprintf("the KV cache (%s, layer %d)", name, il))
			if err != nil {
				return err
			}
			s.kv[name] = ref
			s.where[name] = be
		}
	}
	return nil
}

// deviceUnusable verifies the plan against the device backend before
// anything is registered: every weight the plan puts on the device must be
// a type the device computes with. It returns the fallback reason, or "".
func (s *Session) deviceUnusable(dev backend.Backend) string {
	if dev == nil {
		return ErrNoDeviceBackend.Error()
	}
	var bad []string
	for _, sp := range s.arch.Tensors(s.H) {
		ti, ok := s.file.Tensor(sp.Name)
		if !ok || !s.plan.AllowsWeight(ti.Name) {
			continue
		}
		layer := graph.Unblocked
		if b, ok := offload.BlockOf(ti.Name); ok {
			layer = b
		}
		if !dev.SupportsFor(graph.OpMatMul, ti.Type, layer) && !dev.SupportsFor(graph.OpGetRows, ti.Type, layer) {
			bad = append(bad, fmt.Sprintf("%s (%s)", ti.Name, ti.Type))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	if len(bad) > 3 {
		bad = append(bad[:3], fmt.Sprintf("and %d more", len(bad)-3))
	}
	return fmt.Sprintf("%s cannot compute with %s: every block runs on the CPU", dev.Name(), strings.Join(bad, ", "))
}

// WeightBackend tells the scheduler where a weight or KV region lives.
func (s *Session) WeightBackend(name string) (int, bool) { b, ok := s.where[name]; return b, ok }

// NPast is the number of positions held in the KV cache.
func (s *Session) NPast() int { return s.nPast }

// NCtxLen is the context length (cache positions).
func (s *Session) NCtxLen() int { return s.NCtx }

// NVocab is the logits row length.
func (s *Session) NVocab() int { return s.H.NVocab }

// Rewind forgets cache positions from n on, so a conversation that shares a
// prefix with the previous one re-evaluates only what changed.
func (s *Session) Rewind(n int) error {
	if n < 0 || n > s.nPast {
		return fmt.Errorf("core: cannot rewind to %d of %d cached positions", n, s.nPast)
	}
	s.nPast = n
	return nil
}

// Eval runs tokens at the next positions and returns their logits: one row
// per token when all is true, else only the last token's row. Prompts
// longer than MaxUBatch run in chunks.
func (s *Session) Eval(ctx context.Context, tokens []int32, all bool) ([]float32, error) {
	if len(tokens) == 0 {
		return nil, errors.New("core: eval of no tokens")
	}
	if s.broken != nil {
		return nil, s.broken
	}
	if err := s.checkFile(); err != nil {
		s.broken = err
		s.nPast = 0
		return nil, err
	}
	if s.nPast+len(tokens) > s.NCtx {
		return nil, fmt.Errorf("core: %d cached + %d new tokens exceed the context of %d", s.nPast, len(tokens), s.NCtx)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= s.H.NVocab {
			return nil, fmt.Errorf("core: token id %d outside the vocabulary of %d", t, s.H.NVocab)
		}
	}
	var out []float32
	start := s.nPast
	for off := 0; off < len(tokens); off += MaxUBatch {
		chunk := tokens[off:min(off+MaxUBatch, len(tokens))]
		last := off+len(chunk) == len(tokens)
		var logits []float32
		err := s.guarded(func() (err error) {
			logits, err = s.step(ctx, chunk, all)
			return err
		})
		if err != nil {
			s.nPast = start // the cache rows past start are not trusted
			return nil, err
		}
		if all || last {
			out = append(out, logits...)
		}
	}
	return out, nil
}

// kvClass rounds the attention span up so decode steps reuse one graph for
// 256 positions at a time.
func (s *Session) kvClass(n int) int {
	const step = 256
	return min((n+step-1)/step*step, s.NCtx)
}

func (s *Session) step(ctx context.Context, tokens []int32, all bool) ([]float32, error) {
	T := len(tokens)
	p := graph.Params{Tokens: T, KVLen: s.kvClass(s.nPast + T), GPULayers: s.plan.GPULayers, AllLogits: all && T > 1, Arch: s.H.Arch}
	g, err := s.cache.Get(p, func(p graph.Params) (*graph.Graph, error) {
		g, err := buildGraph(s.arch, s.H, p, s.NCtx, s.KVType, s.file.Tensor)
		if err != nil {
			return nil, err
		}
		if err := graph.AssignBackends(g, s.caps, s.plan, s); err != nil {
			return nil, err
		}
		return g, nil
	})
	if err != nil {
		return nil, err
	}
	kvLookup := func(name string) (alloc.BufRef, bool) { r, ok := s.kv[name]; return r, ok }
	if err := graph.Allocate(g, s.ga, kvLookup); err != nil {
		return nil, err
	}
	defer graph.Release(g, s.ga)
	if err := s.fillInputs(g, tokens, p.KVLen); err != nil {
		return nil, err
	}
	if err := backend.Execute(ctx, g, s.bes); err != nil {
		return nil, err
	}
	out := g.Outputs[0]
	logits := make([]float32, out.Buf.Len/4)
	if err := s.bes[out.Backend].ReadHostWindow(out.Buf, unsafe.Slice((*byte)(unsafe.Pointer(&logits[0])), out.Buf.Len)); err != nil {
		return nil, err
	}
	s.nPast += T
	return logits, nil
}

func (s *Session) fillInputs(g *graph.Graph, tokens []int32, kvLen int) error {
	T := len(tokens)
	pos := make([]int32, T)
	for i := range pos {
		pos[i] = int32(s.nPast + i)
	}
	mask := make([]float32, kvLen*T)
	ninf := float32(math.Inf(-1))
	for t := 0; t < T; t++ {
		row := mask[t*kvLen : (t+1)*kvLen]
		for j := range row {
			if j > s.nPast+t {
				row[j] = ninf
			}
		}
	}
	set := func(name string, b []byte) error {
		n, ok := g.Input(name)
		if !ok {
			return nil
		}
		return s.bes[n.Backend].WriteHostWindow(n.Buf, b)
	}
	if err := set(model.InTokens, i32bytes(tokens)); err != nil {
		return err
	}
	if err := set(model.InPos, i32bytes(pos)); err != nil {
		return err
	}
	if err := set(model.InKVRows, i32bytes(pos)); err != nil {
		return err
	}
	return set(model.InMask, unsafe.Slice((*byte)(unsafe.Pointer(&mask[0])), len(mask)*4))
}

func i32bytes(v []int32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*4)
}

// MemoryReport is the E4 accounting of every backend.
func (s *Session) MemoryReport() []alloc.MemoryReport {
	out := make([]alloc.MemoryReport, s.ga.NumBackends())
	for i := range out {
		out[i] = s.ga.MemoryReport(i)
	}
	return out
}

// Plan is the offload plan the session runs (0 blocks after a fallback).
func (s *Session) Plan() offload.Plan { return s.plan }

// OffloadReport says where the blocks landed.
func (s *Session) OffloadReport() offload.Report { return s.report }

// GraphStats reports graph builds versus reuses.
func (s *Session) GraphStats() graph.CacheStats { return s.cache.Stats() }

// CPUAllocCount is the CPU backend's buffer allocation count.
func (s *Session) CPUAllocCount() int64 { return s.cpu.AllocCount() }

// File is the mapped model (tokenizer and template metadata).
func (s *Session) File() *gguf.File { return s.file }

// Close frees the buffers and unmaps the file.
func (s *Session) Close() error {
	var first error
	if s.ga != nil {
		first = s.ga.Close()
	}
	for _, b := range s.bes {
		if err := b.Close(); err != nil && first == nil {
			first = err
		}
	}
	if s.file != nil {
		if err := s.file.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
