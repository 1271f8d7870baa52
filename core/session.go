package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/core/backend/cpu"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/model"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/core/tokenizer"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/memview"
	"github.com/minfer/minfer/internal/units"
)

// LoadOptions are PlanOptions plus what only a load needs.
type LoadOptions struct {
	PlanOptions
	Threads int // CPU worker threads; 0 = all cores
	// Logf receives once-only warnings (a failed device query).
	Logf func(format string, args ...any)
	// DeviceBackend runs the plan's device blocks. Nil (the default) means
	// the backend registered for the device's kind (backend.Open: CUDA for
	// an NVIDIA GPU), created and owned by the session; when none is
	// registered or it cannot run here, a GPU plan falls back to the CPU
	// with the reason in the OffloadReport. Tests pass a second CPU backend
	// standing in for a device, exercising the same placement, assignment
	// and staging paths a GPU uses; the caller keeps ownership of it.
	DeviceBackend backend.Backend
	// HostMemory answers how much memory the host has; nil means
	// devices.HostMemory.
	HostMemory func() (devices.HostMem, error)
	// NoDeviceFusion keeps a device block's Q, K, V and gate, up weights
	// separate instead of registering the fused device forms (for
	// comparisons; MINFER_DEVICE_FUSION=0 does the same).
	NoDeviceFusion bool
	// CPUWeights is how the CPU holds the weights it runs: "auto" (or ""),
	// "copy" or "map" (cpuWeightsChoice); empty means MINFER_CPU_WEIGHTS,
	// else auto.
	CPUWeights string
}

// EnvDeviceFusion set to 0 turns the fused device forms off.
const EnvDeviceFusion = "MINFER_DEVICE_FUSION"

// Progress reports load progress: done of total weight bytes registered.
type Progress func(done, total int64)

// ErrNoDeviceBackend is the fallback reason when blocks were planned for a
// device that Minfer cannot compute on yet.
var ErrNoDeviceBackend = errors.New("no GPU compute backend for this device: every block runs on the CPU")

// Session is a loaded model with its KV cache. It is owned by one goroutine
// at a time (the UI and CLI give it to a worker).
//
// Its exported fields are what the load was given and never change: the
// inspected model, the plan it was loaded with, the hyper-parameters and
// the KV cache type. Everything else — the context length (NCtxLen), the
// positions cached (NPast), where the blocks run — is read through methods.
type Session struct {
	Info   *ModelInfo
	View   *PlanView
	H      model.HParams
	KVType gguf.GGMLType

	nCtx   int
	file   *gguf.File
	arch   model.Arch
	cpu    *cpu.CPU
	bes    []backend.Backend
	owned  []backend.Backend // what the session created and closes
	caps   []graph.Capability
	ga     *alloc.GraphAllocator
	cache  graph.Cache
	plan   offload.Plan
	report offload.Report
	kv     map[string]alloc.BufRef
	where  map[string]int
	// fuse: device blocks read the fused device forms (model.Fusion).
	fuse  bool
	nPast int
	tok   *tokenizer.Tokenizer

	// stamp is the file as it was mapped; broken is set once the file was
	// seen to change (see checkFile and guarded).
	stamp  os.FileInfo
	broken error

	// Step inputs, kept between steps (the backends copy them on write):
	// positions and ring rows, and the two masks.
	inI32         []int32
	mask, maskSWA []float32
	// inWrites, inRefs, inData: a step's input writes (fillInputs).
	inWrites []inputWrite
	inRefs   []alloc.BufRef
	inData   [][]byte

	// phases, when timing is on (SetStepTiming): the wall time of each
	// part of the steps since, and how many steps.
	phases *StepPhases

	// pl: the next decode step queued behind its backend's gate, and
	// what queuing it needs (prelaunch.go).
	pl prelaunchState

	// pin: a decode step's logits in memory the logits' backend reads
	// straight into (pinnedLogits).
	pin pinnedLogits
}

// pinnedLogits is the session's page-locked logits row: buf, registered
// with the backend be (s.bes[idx], a backend.HostPinner) that reads a
// decode step's logits, so that the device writes them there with no
// staging copy; tried: a decode step looked (a backend that cannot pin is
// not asked again).
type pinnedLogits struct {
	buf   []float32
	be    backend.HostPinner
	idx   int
	tried bool
}

// pinnedFor is the session's pinned logits row of n values for a read by
// backend idx, or nil (it pins no memory, pinning failed, another size or
// backend).
func (s *Session) pinnedFor(idx, n int) []float32 {
	if !s.pin.tried {
		s.pin.tried = true
		if hp, ok := s.bes[idx].(backend.HostPinner); ok {
			buf := make([]float32, n)
			if hp.PinHost(memview.Bytes(buf)) == nil {
				s.pin.buf, s.pin.be, s.pin.idx = buf, hp, idx
			}
		}
	}
	if s.pin.buf == nil || s.pin.idx != idx || len(s.pin.buf) != n {
		return nil
	}
	return s.pin.buf
}

// unpin releases the pinned logits row (Close): the slice stays the
// caller's to read, as plain memory.
func (s *Session) unpin() error {
	if s.pin.buf == nil {
		return nil
	}
	err := s.pin.be.UnpinHost(memview.Bytes(s.pin.buf))
	s.pin = pinnedLogits{tried: true}
	return err
}

// StepPhases is where a step's wall time went: building or finding the
// graph and placing its buffers, writing its inputs, issuing its nodes to
// the backends (on a device: queueing, not running them), reading the
// logits (waiting for the backends, then copying), and releasing the
// buffers; totals over Steps steps.
type StepPhases struct {
	Phase [NumStepPhases]time.Duration
	Steps int
}

// The phases of StepPhases.Phase.
const (
	PhaseGraph = iota
	PhaseInputs
	PhaseIssue
	PhaseRead
	PhaseRelease
	NumStepPhases
)

// StepPhaseNames names the phases, in order.
var StepPhaseNames = [NumStepPhases]string{"graph and buffers", "inputs", "issue", "read", "release"}

// SetStepTiming turns the step phase timing on (zeroed) or off.
func (s *Session) SetStepTiming(on bool) {
	s.phases = nil
	if on {
		s.phases = &StepPhases{}
	}
}

// StepTiming is the phase totals since SetStepTiming(true) (zero when off).
func (s *Session) StepTiming() StepPhases {
	if s.phases == nil {
		return StepPhases{}
	}
	return *s.phases
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
	s := &Session{Info: info, View: view, H: view.H, nCtx: view.Ctx, KVType: view.KVType, file: f,
		kv: map[string]alloc.BufRef{}, where: map[string]int{}, pl: prelaunchState{off: prelaunchOff()}}
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
	s.owned = append(s.owned, s.cpu)
	s.bes = []backend.Backend{s.cpu}
	s.caps = []graph.Capability{s.cpu}
	s.ga = alloc.NewGraphAllocator()
	s.ga.Logf = opts.Logf
	// The CPU refuses what the host cannot hold (alloc.HostBudget).
	hostMem := opts.HostMemory
	if hostMem == nil {
		hostMem = devices.HostMemory
	}
	hm, hmErr := hostMem()
	s.ga.AddBackend(s.cpu, alloc.HostBudget(s.Info.TensorBytes, hm, hmErr))

	s.plan = s.View.Plan
	s.report = offload.Report{Plan: s.plan, Note: s.View.Note}
	wantsDevice := s.plan.DeviceBlocks() > 0 || s.plan.DeviceHoldsUnblocked()
	var dev backend.Backend
	if wantsDevice {
		s.report.DeviceName = deviceLabel(s.View.Device)
		var reason string
		dev, reason = s.openDevice(opts.DeviceBackend)
		if reason == "" {
			reason = s.deviceUnusable(dev)
		}
		if reason != "" {
			// The plan passed the device gate but cannot run there: say so
			// and run everything on the CPU. The report keeps the plan that
			// was asked for; Plan() is what runs.
			s.report.Fallback = reason
			s.plan = offload.NewPlan(0, s.plan.NLayers)
			wantsDevice = false
		}
	}
	if wantsDevice {
		s.bes = append(s.bes, dev)
		s.caps = append(s.caps, dev)
		b := s.ga.AddBackend(dev, s.View.GateBudget)
		s.report.Backend = dev.Name()
		// What the device took before any buffer (its context, modules,
		// workspace) is charged once, through the gate.
		if o, ok := dev.(backend.Overheader); ok {
			if n, what := o.OverheadBytes(); n > 0 {
				if err := s.ga.ChargeFixed(b, n, what); err != nil {
					return err
				}
			}
		}
	}

	specs := s.arch.Tensors(s.H)
	// onDevice: the plan puts this weight on the device, and there is one.
	onDevice := func(name string) bool { return len(s.bes) > 1 && s.plan.AllowsWeight(name) }
	var total, done, cpuBytes int64
	for _, sp := range specs {
		if ti, ok := s.file.Tensor(sp.Name); ok {
			total += ti.NBytes()
			if !onDevice(ti.Name) {
				cpuBytes += ti.NBytes()
			}
		}
	}
	// The CPU's weights: copied into its own memory or used from the
	// mapping; copies are charged, so the host budget then counts no
	// mapped weights.
	mode := opts.CPUWeights
	if mode == "" {
		mode, _ = opts.env()(EnvCPUWeights)
	}
	copyW, why, err := cpuWeightsChoice(mode, cpuBytes, hm, hmErr)
	if err != nil {
		return err
	}
	s.report.HostWeights = why
	if copyW {
		s.cpu.SetCopyWeights(true)
		s.ga.SetMemoryBudget(0, alloc.HostBudget(0, hm, hmErr))
	}
	fusedBy := s.deviceFusions(wantsDevice, opts)
	for _, sp := range specs {
		if err := ctx.Err(); err != nil {
			return err
		}
		ti, ok := s.file.Tensor(sp.Name)
		if !ok {
			continue
		}
		if f, ok := fusedBy[ti.Name]; ok {
			// Registered once, in the fused form, at its first part.
			if ti.Name == f.Parts[0] {
				n, err := s.registerFused(f)
				if err != nil {
					return err
				}
				for _, part := range f.Parts {
					if pi, ok := s.file.Tensor(part); ok {
						s.dropCopied(pi, 1)
					}
				}
				done += n
				if progress != nil {
					progress(done, total)
				}
			}
			continue
		}
		data, err := s.file.TensorData(ti)
		if err != nil {
			return err
		}
		be := 0
		if copyW && !onDevice(ti.Name) {
			// The copy is host memory: the gate admits it first.
			if err := s.ga.Admits(0, ti.NBytes(), fmt.Sprintf("weight %s (copied into memory)", ti.Name)); err != nil {
				return err
			}
		}
		if onDevice(ti.Name) {
			be = 1
			// A device copy takes device memory: the gate admits it first,
			// so a plan that does not fit fails with the four numbers,
			// never with the driver's out-of-memory.
			if err := s.ga.Admits(be, ti.NBytes(), fmt.Sprintf("weight %s", ti.Name)); err != nil {
				return err
			}
		}
		if err := s.bes[be].RegisterWeight(ti.Name, ti.Type, ti.Dims, data); err != nil {
			return fmt.Errorf("core: %s: registering %q: %w", s.bes[be].Name(), ti.Name, err)
		}
		s.where[ti.Name] = be
		s.dropCopied(ti, be)
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
	if _, err := s.H.KVRowBytes(s.KVType); err != nil {
		return err
	}
	for il := 0; il < s.H.NLayer; il++ {
		be := 0
		if len(s.bes) > 1 && s.plan.OnDevice(il) {
			be = 1
		}
		for _, kind := range []string{"k", "v"} {
			name := model.KVName(kind, il)
			ref, err := s.ga.AllocPersistent(be, s.H.KVLayerBytes(il, s.nCtx, s.KVType)/2, fmt.Sprintf("the KV cache (%s, layer %d)", name, il))
			if err != nil {
				return err
			}
			s.kv[name] = ref
			s.where[name] = be
		}
	}
	if len(s.bes) > 1 {
		// What the device itself says once the weights and the cache are
		// there (cuMemGetInfo): measured, beside the accounted bytes.
		if mi, ok := s.bes[1].(backend.MemInfoer); ok {
			if free, total, err := mi.MemInfo(); err == nil {
				s.report.DeviceFree, s.report.DeviceTotal = int64(free), int64(total)
			}
		}
	}
	return nil
}

// dropCopied gives back the mapping's pages of a tensor just registered on
// backend be when be copied it (a device, or the CPU copying its weights):
// nothing reads them from the mapping again, and the process's resident
// set would otherwise count them a second time (during the load as well:
// tensor by tensor, the mapping's share never grows past one tensor).
func (s *Session) dropCopied(ti *gguf.TensorInfo, be int) {
	if be != 0 || s.cpu.CopiesWeights() {
		_ = s.file.DropPages(ti) // advice: a failure leaves the pages where they are
	}
}

// deviceFusions decides the fused device forms: for every block the plan
// puts on the device, the fusions its architecture lists (model.Fusion),
// keyed by part name. The builder reads s.fuse and asks the same question.
func (s *Session) deviceFusions(wantsDevice bool, opts LoadOptions) map[string]model.Fusion {
	v, set := opts.env()(EnvDeviceFusion)
	s.fuse = wantsDevice && !opts.NoDeviceFusion && !(set && v == "0")
	if !s.fuse {
		return nil
	}
	by := map[string]model.Fusion{}
	for il := 0; il < s.H.NLayer; il++ {
		if !s.plan.OnDevice(il) {
			continue
		}
		for _, f := range model.FusionsOf(s.arch, s.H, s.file.Tensor, il) {
			for _, p := range f.Parts {
				by[p] = f
			}
		}
	}
	return by
}

// registerFused registers fusion f on the device, through the gate, and
// returns its bytes. A device that assembles parts itself (one allocation,
// each part copied to its place) is given the parts; another gets one
// concatenated host copy.
func (s *Session) registerFused(f model.Fusion) (int64, error) {
	n, err := f.Bytes()
	if err != nil {
		return 0, fmt.Errorf("core: fused %s: %w", f.Name, err)
	}
	if err := s.ga.Admits(1, n, fmt.Sprintf("weight %s", f.Name)); err != nil {
		return 0, err
	}
	parts := make([][]byte, len(f.Parts))
	for i, name := range f.Parts {
		ti, ok := s.file.Tensor(name)
		if !ok {
			return 0, fmt.Errorf("core: fused %s: part %q is missing", f.Name, name)
		}
		if parts[i], err = s.file.TensorData(ti); err != nil {
			return 0, err
		}
	}
	dev := s.bes[1]
	if pr, ok := dev.(backend.PartsRegisterer); ok {
		err = pr.RegisterWeightParts(f.Name, f.Type, f.Dims, parts)
	} else {
		whole := make([]byte, 0, n)
		for _, p := range parts {
			whole = append(whole, p...)
		}
		if int64(len(whole)) != n {
			return 0, fmt.Errorf("core: fused %s: parts hold %d bytes, want %d", f.Name, len(whole), n)
		}
		err = dev.RegisterWeight(f.Name, f.Type, f.Dims, whole)
	}
	if err != nil {
		return 0, fmt.Errorf("core: %s: registering %q: %w", dev.Name(), f.Name, err)
	}
	s.where[f.Name] = 1
	return n, nil
}

// openDevice returns the device backend: the injected one (the caller's),
// or the one registered for the device's kind (the session's, closed with
// it). On failure it returns the fallback reason.
func (s *Session) openDevice(injected backend.Backend) (backend.Backend, string) {
	if injected != nil {
		return injected, ""
	}
	dev, err := backend.Open(s.View.Device)
	if errors.Is(err, backend.ErrNoBackend) {
		if r, ok := s.View.Device.(devices.Reported); ok && r.Kind == devices.KindFake {
			// MINFER_FAKE_DEVICE simulates an answer, not a device to run on.
			return nil, "no GPU compute backend for a simulated device (MINFER_FAKE_DEVICE): every block runs on the CPU"
		}
		return nil, fmt.Sprintf("no GPU compute backend for %s: every block runs on the CPU", deviceLabel(s.View.Device))
	}
	if err != nil {
		return nil, fmt.Sprintf("%v: every block runs on the CPU", err)
	}
	s.owned = append(s.owned, dev)
	return dev, ""
}

// deviceUnusable verifies the plan against the device backend before
// anything is registered: every weight the plan puts on the device must be
// read by a node the device runs. It returns the fallback reason, or "".
func (s *Session) deviceUnusable(dev backend.Backend) string {
	if s.plan.DeviceBlocks() > 0 && !attentionUsable(dev, s.H, s.KVType, s.nCtx) {
		// The attention of a device block reads its KV cache, which lives
		// there: a device that cannot run it cannot hold the block.
		return fmt.Sprintf("%s cannot run this model's attention (%s): every block runs on the CPU", dev.Name(), attentionKind(s.H))
	}
	var bad []string
	for _, sp := range s.arch.Tensors(s.H) {
		ti, ok := s.file.Tensor(sp.Name)
		if !ok || !s.plan.AllowsWeight(ti.Name) {
			continue
		}
		if !weightUsable(dev, ti) {
			bad = append(bad, fmt.Sprintf("%s (%s)", ti.Name, ti.Type))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf("%s cannot compute with %s: every block runs on the CPU", dev.Name(), units.JoinFirst(bad, 3, ", "))
}

// attentionUsable asks the device about a one-token attention node of the
// model's shape and parameters (soft cap included).
func attentionUsable(dev graph.Capability, h model.HParams, kvType gguf.GGMLType, nCtx int) bool {
	kvLen := min(nCtx, 256)
	q := &graph.Node{Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{int64(h.HeadDim), int64(h.NHead), 1, 1}, Layer: 0}
	k := &graph.Node{Op: graph.OpKV, Type: kvType, Shape: [4]int64{int64(h.KVRow()), int64(nCtx), 1, 1}, Layer: 0}
	v := &graph.Node{Op: graph.OpKV, Type: kvType, Shape: k.Shape, Layer: 0}
	mask := &graph.Node{Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{int64(kvLen), 1, 1, 1}, Layer: 0}
	att := &graph.Node{Op: graph.OpAttention, Type: gguf.TypeF32, Shape: [4]int64{int64(h.HeadDim * h.NHead), 1, 1, 1},
		Src: [4]*graph.Node{q, k, v, mask}, Layer: 0,
		Params: graph.AttentionParams{Scale: h.QScale, KVHeads: h.NHeadKV, KVLen: kvLen, SoftCap: h.AttnSoftCap}}
	return dev.SupportsNode(att)
}

func attentionKind(h model.HParams) string {
	if h.AttnSoftCap > 0 {
		return fmt.Sprintf("scores soft-capped at %g", h.AttnSoftCap)
	}
	return fmt.Sprintf("%d heads of %d", h.NHead, h.HeadDim)
}

// weightUsable asks the device about the nodes that read a weight: a
// matrix (mat_mul, or get_rows for an embedding table) or a vector (the
// norm weights and biases mul and add broadcast).
func weightUsable(dev graph.Capability, ti *gguf.TensorInfo) bool {
	layer := graph.Unblocked
	if b, ok := offload.BlockOf(ti.Name); ok {
		layer = b
	}
	w := &graph.Node{Op: graph.OpWeight, Type: ti.Type, Name: ti.Name, Weight: ti.Name, Layer: layer, Shape: [4]int64{1, 1, 1, 1}}
	copy(w.Shape[:], ti.Dims)
	x := &graph.Node{Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{w.Shape[0], 1, 1, 1}, Layer: layer}
	ids := &graph.Node{Op: graph.OpInput, Type: gguf.TypeI32, Shape: [4]int64{1, 1, 1, 1}, Layer: layer}
	readers := []*graph.Node{
		{Op: graph.OpMatMul, Type: gguf.TypeF32, Shape: [4]int64{w.Rows(), 1, 1, 1}, Src: [4]*graph.Node{w, x}, Layer: layer},
		{Op: graph.OpGetRows, Type: gguf.TypeF32, Shape: [4]int64{w.Shape[0], 1, 1, 1}, Src: [4]*graph.Node{w, ids}, Layer: layer},
	}
	if len(ti.Dims) == 3 {
		// Experts ([in, out, n_expert]) are read only by the expert mat-mul.
		readers = []*graph.Node{{Op: graph.OpMatMulID, Type: gguf.TypeF32, Shape: [4]int64{w.Shape[1], 1, 1, 1}, Src: [4]*graph.Node{w, x, ids}, Layer: layer}}
	}
	if w.Rows() == 1 {
		readers = append(readers,
			&graph.Node{Op: graph.OpMul, Type: gguf.TypeF32, Shape: x.Shape, Src: [4]*graph.Node{x, w}, Layer: layer},
			&graph.Node{Op: graph.OpAdd, Type: gguf.TypeF32, Shape: x.Shape, Src: [4]*graph.Node{x, w}, Layer: layer})
	}
	for _, r := range readers {
		if dev.SupportsNode(r) {
			return true
		}
	}
	return false
}

// WeightBackend tells the scheduler where a weight or KV region lives.
func (s *Session) WeightBackend(name string) (int, bool) { b, ok := s.where[name]; return b, ok }

// NPast is the number of positions held in the KV cache.
func (s *Session) NPast() int { return s.nPast }

// NCtxLen is the context length (cache positions).
func (s *Session) NCtxLen() int { return s.nCtx }

// NVocab is the logits row length.
func (s *Session) NVocab() int { return s.H.NVocab }

// ErrRewindWindow: a sliding-window block's cache ring no longer holds the
// window before the position asked for (it was overwritten since); the
// caller re-evaluates from an earlier point (0 always works).
var ErrRewindWindow = errors.New("core: the sliding-window cache no longer holds that position's window")

// CanRewind reports whether Rewind(n) keeps a usable cache: always for
// full blocks; for sliding blocks only while their ring still holds the
// window before position n.
func (s *Session) CanRewind(n int) bool {
	if n == 0 || n == s.nPast || s.H.SlidingBlocks() == 0 {
		return n >= 0 && n <= s.nPast
	}
	ring := s.H.SWARows(s.nCtx)
	if ring >= s.nCtx {
		return true // the ring never wraps
	}
	// Positions n−window+1 … n−1 must not have been overwritten by
	// positions up to nPast−1: q+ring > nPast−1 for the smallest such q.
	return n-s.H.SlidingWindow+1+ring > s.nPast-1
}

// Rewind forgets cache positions from n on, so a conversation that shares a
// prefix with the previous one re-evaluates only what changed.
func (s *Session) Rewind(n int) error {
	if n < 0 || n > s.nPast {
		return fmt.Errorf("core: cannot rewind to %d of %d cached positions", n, s.nPast)
	}
	if !s.CanRewind(n) {
		return fmt.Errorf("%w: to %d of %d cached positions", ErrRewindWindow, n, s.nPast)
	}
	s.dropPrelaunch()
	s.nPast = n
	return nil
}

// Eval runs tokens at the next positions and returns their logits: one row
// per token when all is true, else only the last token's row. Prompts
// longer than MaxUBatch run in chunks.
func (s *Session) Eval(ctx context.Context, tokens []int32, all bool) ([]float32, error) {
	return s.eval(ctx, tokens, all, nil)
}

// EvalInto is Eval of the last token's logits (all false) into dst, which
// it returns resized to the vocabulary (reallocated only when too small):
// a decode loop that passes the previous step's slice back reads every
// step's logits into the same memory instead of a fresh allocation (whose
// first touch, page by page, cost a 128k-vocabulary model 0.2 ms a token).
// A decode step (one token) whose logits come from a backend that reads
// straight into page-locked host memory (backend.HostPinner: CUDA)
// returns the session's own pinned row instead of dst, as
// llama_get_logits does: it holds these logits until the next Eval or
// EvalInto (and stays readable after Close); pass it back as dst.
func (s *Session) EvalInto(ctx context.Context, tokens []int32, dst []float32) ([]float32, error) {
	if dst == nil {
		dst = []float32{}
	}
	return s.eval(ctx, tokens, false, dst)
}

func (s *Session) eval(ctx context.Context, tokens []int32, all bool, dst []float32) ([]float32, error) {
	if len(tokens) == 0 {
		return nil, errors.New("core: eval of no tokens")
	}
	if s.broken != nil {
		return nil, s.broken
	}
	// A decode step whose queued run (prelaunch.go) is at this position
	// runs wholly on the device and reads no mapped weight: its file check
	// follows the gate's opening (step), off the time the device idles
	// between steps. Any other step is checked before it starts.
	late := s.pl.pre.g != nil && len(tokens) == 1 && s.pl.pre.nPast == s.nPast
	if !late {
		if err := s.checkFile(); err != nil {
			s.broken = err
			s.nPast = 0
			return nil, err
		}
	}
	if s.nPast+len(tokens) > s.nCtx {
		return nil, fmt.Errorf("core: %d cached + %d new tokens exceed the context of %d", s.nPast, len(tokens), s.nCtx)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= s.H.NVocab {
			return nil, fmt.Errorf("core: token id %d outside the vocabulary of %d", t, s.H.NVocab)
		}
	}
	s.pl.lateCheck = late // (step clears it)
	var out []float32
	start := s.nPast
	for off := 0; off < len(tokens); off += MaxUBatch {
		chunk := tokens[off:min(off+MaxUBatch, len(tokens))]
		last := off+len(chunk) == len(tokens)
		var logits []float32
		err := s.guarded(func() (err error) {
			var into []float32
			if last {
				into = dst
			}
			logits, err = s.step(ctx, chunk, all, into)
			return err
		})
		if err != nil {
			s.nPast = start // the cache rows past start are not trusted
			if s.broken != nil {
				s.nPast = 0 // nor any, once the file changed
			}
			return nil, err
		}
		if !all && !last {
			continue
		}
		if out == nil {
			out = logits // step's own slice: no copy for the usual single chunk
		} else {
			out = append(out, logits...)
		}
	}
	return out, nil
}

// kvClass rounds the attention span up so decode steps reuse one graph for
// 256 positions at a time.
func (s *Session) kvClass(n int) int {
	const step = 256
	return min((n+step-1)/step*step, s.nCtx)
}

// step runs one chunk and reads its logits into a new slice, or into dst
// (resized) when dst is not nil.
func (s *Session) step(ctx context.Context, tokens []int32, all bool, dst []float32) ([]float32, error) {
	var t0 time.Time
	ph := s.phases
	lap := func(phase int) {
		if ph != nil {
			t := time.Now()
			ph.Phase[phase] += t.Sub(t0)
			t0 = t
		}
	}
	if ph != nil {
		t0 = time.Now()
	}
	T := len(tokens)
	p := graph.Params{Tokens: T, KVLen: s.kvClass(s.nPast + T), GPULayers: s.plan.GPULayers, AllLogits: all && T > 1, Arch: s.H.Arch}
	// A step queued behind its gate by the step before (prelaunch.go):
	// opened with this token when it is this step, else let go.
	late, gt := s.pl.lateCheck, s.pl.pre.gater
	s.pl.lateCheck = false
	g := s.takePrelaunch(tokens, p)
	held := g != nil
	defer func() {
		if held {
			graph.Release(g, s.ga)
		}
		if ph != nil {
			lap(PhaseRelease)
			ph.Steps++
		}
	}()
	if late {
		// eval's file check, here: after the queued step's gate opened
		// (its run reads no mapped weight), else before this step reads
		// anything. A change waits for the opened run, then fails the step.
		if err := s.checkFile(); err != nil {
			if held {
				s.settle(gt)
			}
			s.broken = err
			return nil, err
		}
	}
	if g == nil {
		var err error
		if g, err = s.graphFor(p); err != nil {
			return nil, err
		}
		if err := graph.Allocate(g, s.ga, s.kvLookup); err != nil {
			return nil, err
		}
		held = true
		lap(PhaseGraph)
		if err := s.fillInputs(g, tokens, p.KVLen, s.nPast); err != nil {
			return nil, err
		}
		lap(PhaseInputs)
		if err := backend.Execute(ctx, g, s.bes); err != nil {
			return nil, err
		}
		lap(PhaseIssue)
	}
	out := g.Outputs[0]
	be := s.bes[out.Backend]
	var logits []float32
	if n := int(out.Buf.Len / 4); dst != nil {
		// A decode step of EvalInto: into the pinned row where the
		// backend reads straight into it (EvalInto's contract).
		if T == 1 {
			logits = s.pinnedFor(out.Backend, n)
		}
		if logits == nil {
			logits = reuse(dst, n)
		}
	} else {
		logits = make([]float32, n)
	}
	if tr, ok := be.(backend.ThenReader); ok && s.prelaunchGater(g, p) != nil {
		var err error
		if held, err = s.readQueueNext(ctx, tr, g, logits, s.nPast+T); err != nil {
			return nil, err
		}
	} else if err := be.ReadHostWindow(out.Buf, memview.Bytes(logits)); err != nil {
		return nil, err
	}
	lap(PhaseRead)
	s.nPast += T
	return logits, nil
}

// graphFor is the graph of p: the cache's, or built and assigned.
func (s *Session) graphFor(p graph.Params) (*graph.Graph, error) {
	return s.cache.Get(p, func(p graph.Params) (*graph.Graph, error) {
		g, err := buildGraph(s.arch, s.H, p, s.nCtx, s.KVType, s.file.Tensor, s.fuse)
		if err != nil {
			return nil, err
		}
		if err := graph.AssignBackends(g, s.caps, s.plan, s); err != nil {
			return nil, err
		}
		return g, nil
	})
}

// kvLookup is graph.Allocate's: the cache regions by name.
func (s *Session) kvLookup(name string) (alloc.BufRef, bool) { r, ok := s.kv[name]; return r, ok }

// fillInputs writes g's inputs for tokens at positions nPast, nPast+1, …
func (s *Session) fillInputs(g *graph.Graph, tokens []int32, kvLen, nPast int) error {
	T := len(tokens)
	s.inI32 = reuse(s.inI32, 2*T)
	pos, rows := s.inI32[:T], s.inI32[T:]
	for i := range pos {
		pos[i] = int32(nPast + i)
	}
	// The writes are gathered and issued at the end, in one call per
	// backend where it takes a batch (backend.BatchWriter).
	s.inWrites = s.inWrites[:0]
	set := func(name string, b []byte) error {
		n, ok := g.Input(name)
		if !ok {
			return nil
		}
		s.inWrites = append(s.inWrites, inputWrite{n.Backend, n.Buf, b})
		return nil
	}
	if err := set(model.InTokens, memview.Bytes(tokens)); err != nil {
		return err
	}
	if err := set(model.InPos, memview.Bytes(pos)); err != nil {
		return err
	}
	if _, ok := g.Input(model.InMask); ok {
		if err := set(model.InKVRows, memview.Bytes(pos)); err != nil {
			return err
		}
		s.mask = reuse(s.mask, kvLen*T)
		if err := set(model.InMask, memview.Bytes(causalMask(s.mask, nPast, T, kvLen))); err != nil {
			return err
		}
	}
	if _, ok := g.Input(model.InMaskSWA); ok {
		ring := s.H.SWARows(s.nCtx)
		for i, p := range pos {
			rows[i] = p % int32(ring)
		}
		if err := set(model.InKVRowsSWA, memview.Bytes(rows)); err != nil {
			return err
		}
		kvLenSWA := s.H.SWAKVLen(s.nCtx, kvLen)
		s.maskSWA = reuse(s.maskSWA, kvLenSWA*T)
		if err := set(model.InMaskSWA, memview.Bytes(windowMask(s.maskSWA, nPast, T, kvLenSWA, ring, s.H.SlidingWindow))); err != nil {
			return err
		}
	}
	return s.flushInputs()
}

// inputWrite is one input's bytes for its backend's window.
type inputWrite struct {
	be   int
	ref  alloc.BufRef
	data []byte
}

// flushInputs issues the gathered input writes: each batch-writing
// backend's in one call, the others' one at a time.
func (s *Session) flushInputs() error {
	for bi, be := range s.bes {
		bw, batch := be.(backend.BatchWriter)
		s.inRefs, s.inData = s.inRefs[:0], s.inData[:0]
		for _, w := range s.inWrites {
			if w.be != bi {
				continue
			}
			if !batch {
				if err := be.WriteHostWindow(w.ref, w.data); err != nil {
					return err
				}
				continue
			}
			s.inRefs, s.inData = append(s.inRefs, w.ref), append(s.inData, w.data)
		}
		if batch && len(s.inRefs) > 0 {
			if err := bw.WriteHostWindows(s.inRefs, s.inData); err != nil {
				return err
			}
		}
	}
	return nil
}

// reuse returns buf resized to n, reallocated only when it is too small.
func reuse[E any](buf []E, n int) []E {
	if cap(buf) < n {
		return make([]E, n)
	}
	return buf[:n]
}

// causalMask fills mask (kvLen×T) so token t (position nPast+t) sees cache
// rows 0..nPast+t, and returns it.
func causalMask(mask []float32, nPast, T, kvLen int) []float32 {
	ninf := float32(math.Inf(-1))
	for t := 0; t < T; t++ {
		row := mask[t*kvLen : (t+1)*kvLen]
		for j := range row {
			row[j] = 0
			if j > nPast+t {
				row[j] = ninf
			}
		}
	}
	return mask
}

// windowMask lets token t (position p = nPast+t) see positions q with
// p−window < q ≤ p (llama.cpp's sliding-window rule), which live in ring
// row q mod ring. A ring of window + one step's tokens still holds every
// such q after the step wrote its rows. It fills mask (kvLen×T) and
// returns it.
func windowMask(mask []float32, nPast, T, kvLen, ring, window int) []float32 {
	ninf := float32(math.Inf(-1))
	for i := range mask {
		mask[i] = ninf
	}
	for t := 0; t < T; t++ {
		p := nPast + t
		row := mask[t*kvLen : (t+1)*kvLen]
		for q := max(0, p-window+1); q <= p; q++ {
			row[q%ring] = 0
		}
	}
	return mask
}

// MemoryReport is the memory accounting (E4, docs/memory-policy.md) of
// every backend.
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
	s.dropPrelaunch()
	first := s.unpin()
	if s.ga != nil {
		if err := s.ga.Close(); err != nil && first == nil {
			first = err
		}
	}
	for _, b := range s.owned {
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
