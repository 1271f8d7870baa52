package core

import (
	"errors"
	"fmt"
	"os"

	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/model"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
)

// DefaultCtx is the context length when none is asked for (or the trained
// one, if smaller).
const DefaultCtx = 4096

// MaxUBatch bounds the tokens of one prefill step: longer prompts run in
// chunks so activation memory does not grow with the prompt (and a sliding
// block's cache ring holds its window plus one such step).
const MaxUBatch = model.MaxUBatch

// KVCache chooses the KV cache's element type. The zero value is F16,
// llama.cpp's default (gguf.TypeF32 is 0, so a GGMLType field could not
// tell "unset" from F32).
type KVCache int

const (
	KVCacheF16 KVCache = iota
	KVCacheF32
)

// Type is the ggml type of the cache elements.
func (k KVCache) Type() (gguf.GGMLType, error) {
	switch k {
	case KVCacheF16:
		return gguf.TypeF16, nil
	case KVCacheF32:
		return gguf.TypeF32, nil
	}
	return 0, fmt.Errorf("core: KV cache type %d is not supported (F16, F32)", int(k))
}

// PlanOptions are the user's choices before a load.
type PlanOptions struct {
	GPULayers offload.Request
	Ctx       int     // 0: min(trained, DefaultCtx)
	KVCache   KVCache // the cache element type: F16 unless asked for F32
	// SWAFull keeps every position in sliding-window blocks instead of a
	// ring of the window plus one step (llama.cpp's --swa-full).
	SWAFull bool
	// Device answers the device question; nil means devices.QueryGPU.
	Device func() devices.DeviceMemory
	// Env looks up MINFER_GPU_MEM; nil means os.LookupEnv.
	Env func(string) (string, bool)
}

func (o PlanOptions) device() devices.DeviceMemory {
	if o.Device != nil {
		return o.Device()
	}
	return QueryDevice()
}

// QueryDevice is the device answer the plan and the load use: devices'
// (NVML, Metal, the fake), or, when that finds no device (a build without
// cgo cannot ask NVML), the answer of a registered compute backend's own
// driver (CUDA's cuMemGetInfo).
func QueryDevice() devices.DeviceMemory {
	dm := devices.QueryGPU()
	if _, none := dm.(devices.NoDevice); none {
		if r, ok := backend.QueryDevice().(devices.Reported); ok {
			return r
		}
	}
	return dm
}

func (o PlanOptions) env() func(string) (string, bool) {
	if o.Env != nil {
		return o.Env
	}
	return os.LookupEnv
}

// PlanView is everything the plan screen and `minfer plan` show.
type PlanView struct {
	Info   *ModelInfo
	Device devices.DeviceMemory
	// WeightBudget is the automatic fit's budget (offload.WeightBudget); BudgetErr is set when the device
	// query failed (auto is then refused, an explicit count still works).
	WeightBudget offload.Budget
	BudgetErr    error
	// GateBudget is the device gate's budget (alloc.BudgetDecision: the same ¾ unless
	// MINFER_GPU_MEM overrides the fit).
	GateBudget alloc.Budget
	// WeightFit is the pure prefix fit (offload.FitBlocks) of the weights into the
	// weight budget; Fit is what auto resolves to: WeightFit, lowered when
	// the KV cache and activations at this context would not pass the gate
	// with it. Auto never proposes a plan the gate refuses.
	WeightFit int
	Fit       int // the auto-fit GPULayers (0..NLayers+1)
	Request   offload.Request
	Plan      offload.Plan
	Note      string
	Ctx       int
	KVType    gguf.GGMLType
	// H are the hyper-parameters the plan was made for (the file's, with
	// the SWAFull choice applied).
	H model.HParams

	DeviceWeights, HostWeights int64
	DeviceKV, HostKV           int64
	// KVSaved is what the sliding-window rings save against keeping every
	// position in every block (0 without sliding blocks or with SWAFull).
	KVSaved int64
	// Activations is the activation pool a prefill step of MaxUBatch
	// tokens at full context needs, measured by a dry run of the allocator
	// over the real graph.
	Activations int64
	// Refusal is set when the plan would not pass the device's gate (alloc).
	Refusal  *alloc.Refusal
	Warnings []string
}

// DeviceTotal is what the plan puts on the device: weights, KV, activations.
func (v *PlanView) DeviceTotal() int64 {
	if v.Plan.DeviceBlocks() == 0 && !v.Plan.DeviceHoldsUnblocked() {
		return 0
	}
	return v.DeviceWeights + v.DeviceKV + v.Activations
}

// Plan resolves the offload request against the device's answer.
func Plan(info *ModelInfo, opts PlanOptions) (*PlanView, error) {
	if info.HParams == nil || info.Problem != "" {
		return nil, fmt.Errorf("core: %s cannot be planned: %s", info.Name, info.Problem)
	}
	h := *info.HParams
	kv, err := opts.KVCache.Type()
	if err != nil {
		return nil, err
	}
	h.SWAFull = opts.SWAFull
	v := &PlanView{Info: info, Device: opts.device(), KVType: kv, Request: opts.GPULayers, H: h}
	if _, err := h.KVRowBytes(kv); err != nil {
		return nil, fmt.Errorf("core: %s cannot be planned: %w", info.Name, err)
	}
	v.Ctx = opts.Ctx
	if v.Ctx <= 0 {
		v.Ctx = min(h.NCtxTrain, DefaultCtx)
	}
	if v.Ctx > 1<<22 {
		return nil, fmt.Errorf("core: context length %d is absurd", v.Ctx)
	}
	var wb offload.Budget
	wb, err = offload.WeightBudget(v.Device, opts.env())
	var rq *offload.RequestError
	if errors.As(err, &rq) {
		return nil, err // a malformed MINFER_GPU_MEM is a refused load
	}
	v.WeightBudget, v.BudgetErr = wb, err
	v.GateBudget = alloc.BudgetDecision(v.Device)
	if _, ok := opts.env()(offload.EnvGPUMem); ok && err == nil {
		v.GateBudget = alloc.Limit(int64(wb.Bytes), wb.Source)
	}
	v.WeightFit = offload.FitBlocks(info.BlockBytes, info.UnblockedBytes, wb.Bytes)
	v.Fit = v.WeightFit
	if v.Request.Auto && v.BudgetErr != nil {
		return v, fmt.Errorf("core: auto offload needs the device's answer: %w", v.BudgetErr)
	}
	v.Activations, err = measureActivations(info, h, v.Ctx, v.KVType)
	if err != nil {
		return nil, err
	}
	if v.BudgetErr == nil {
		v.setPlan(offload.NewPlan(v.WeightFit, h.NLayer))
		v.Fit = v.LargestFitting()
	}
	plan, note := v.Request.Resolve(h.NLayer, v.Fit)
	if v.Request.Auto && v.Fit < v.WeightFit {
		note = fmt.Sprintf("auto-fit lowered from %s to %s so the KV cache and activations at context %d pass the device gate",
			offload.NewPlan(v.WeightFit, h.NLayer), offload.NewPlan(v.Fit, h.NLayer), v.Ctx)
	}
	v.Note = note
	v.setPlan(plan)
	return v, nil
}

// setPlan places the bytes of plan and runs the gate's arithmetic.
func (v *PlanView) setPlan(plan offload.Plan) {
	info, h := v.Info, v.H
	v.Plan = plan
	v.DeviceWeights, v.HostWeights = 0, 0
	for i, b := range info.BlockBytes {
		if plan.OnDevice(i) {
			v.DeviceWeights += b
		} else {
			v.HostWeights += b
		}
	}
	if plan.DeviceHoldsUnblocked() {
		v.DeviceWeights += info.UnblockedBytes
	} else {
		v.HostWeights += info.UnblockedBytes
	}
	v.DeviceKV = h.KVBytes(v.Ctx, v.KVType, plan.OnDevice)
	v.HostKV = h.KVBytes(v.Ctx, v.KVType, nil) - v.DeviceKV
	full := h
	full.SWAFull = true
	v.KVSaved = full.KVBytes(v.Ctx, v.KVType, nil) - v.DeviceKV - v.HostKV
	v.Refusal, v.Warnings = nil, nil
	v.check()
}

// check runs the device gate's arithmetic (docs/memory-policy.md, E4) for the device before anything is
// loaded, and warns when KV + activations outgrow the held-back quarter.
func (v *PlanView) check() {
	if v.DeviceTotal() == 0 {
		return
	}
	if v.GateBudget.Limited {
		pooled := v.DeviceKV
		if v.DeviceWeights+pooled+v.Activations > v.GateBudget.Bytes {
			v.Refusal = &alloc.Refusal{Backend: deviceLabel(v.Device), What: "this plan", Weights: v.DeviceWeights, Pooled: pooled, Request: v.Activations, Budget: v.GateBudget.Bytes}
		}
	}
	if d, ok := v.Device.(devices.Reported); ok {
		held := int64(d.Free) - v.GateBudget.Bytes
		if extra := v.DeviceKV + v.Activations; v.GateBudget.Limited && extra > held && v.Refusal == nil {
			v.Warnings = append(v.Warnings, fmt.Sprintf("KV cache %s + activations %s at context %d exceed the held-back quarter (%s): a long chat may run out of device memory; lower the context or the GPU blocks",
				alloc.MiB(v.DeviceKV), alloc.MiB(v.Activations), v.Ctx, alloc.MiB(held)))
		}
	}
}

// LargestFitting is the most blocks, up to the current plan's, whose plan
// passes the device gate — what a refusal dialog offers ("Use N blocks").
func (v *PlanView) LargestFitting() int {
	for n := v.Plan.GPULayers; n > 0; n-- {
		w := *v
		w.setPlan(offload.NewPlan(n, v.Plan.NLayers))
		if w.Refusal == nil {
			return n
		}
	}
	return 0
}

func deviceLabel(dm devices.DeviceMemory) string {
	if d, ok := dm.(devices.Reported); ok {
		return d.Label()
	}
	return "device"
}

// countingBuffers stands in for a backend in the dry run: it hands out ids
// and remembers nothing but the bytes asked for.
type countingBuffers struct{ next alloc.BufID }

func (c *countingBuffers) Name() string { return "dry-run" }
func (c *countingBuffers) AllocBuffer(int64) (alloc.BufID, error) {
	c.next++
	return c.next, nil
}
func (c *countingBuffers) FreeBuffer(alloc.BufID) error { return nil }
func (c *countingBuffers) WeightsBytes() int64          { return 0 }

// measureActivations builds the real prefill graph (MaxUBatch tokens at
// full context) and runs the allocator's walk over it: the pool bytes it
// creates are what such a step takes.
func measureActivations(info *ModelInfo, h model.HParams, ctx int, kvType gguf.GGMLType) (int64, error) {
	info.actMu.Lock()
	defer info.actMu.Unlock()
	key := actKey{ctx, kvType, h.SWAFull}
	if n, ok := info.activations[key]; ok {
		return n, nil
	}
	n, err := dryRunActivations(info, h, ctx, kvType)
	if err != nil {
		return 0, err
	}
	if info.activations == nil {
		info.activations = map[actKey]int64{}
	}
	info.activations[key] = n
	return n, nil
}

func dryRunActivations(info *ModelInfo, h model.HParams, ctx int, kvType gguf.GGMLType) (int64, error) {
	f, err := gguf.Open(info.Path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	arch, err := model.Lookup(info.Arch)
	if err != nil {
		return 0, err
	}
	p := graph.Params{Tokens: min(MaxUBatch, ctx), KVLen: ctx, Arch: info.Arch}
	g, err := buildGraph(arch, h, p, ctx, kvType, f.Tensor, false)
	if err != nil {
		return 0, err
	}
	for _, n := range g.Nodes {
		n.Backend = 0
	}
	ga := alloc.NewGraphAllocator()
	ga.AddBackend(&countingBuffers{}, alloc.Unlimited("dry run"))
	kv := func(string) (alloc.BufRef, bool) { return alloc.BufRef{ID: -1, Len: 1}, true }
	if err := graph.Allocate(g, ga, kv); err != nil {
		return 0, err
	}
	return ga.MemoryReport(0).PoolBytes, nil
}

func buildGraph(arch model.Arch, h model.HParams, p graph.Params, nCtx int, kvType gguf.GGMLType, tensors func(string) (*gguf.TensorInfo, bool), deviceFusion bool) (*graph.Graph, error) {
	b := &model.Builder{Builder: graph.NewBuilder(p), H: h, P: p, NCtx: nCtx, KVType: kvType, Tensors: tensors, DeviceFusion: deviceFusion}
	out, err := arch.Build(b)
	if err != nil {
		return nil, err
	}
	return b.Finish(out)
}
