package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/planjson"
)

func init() {
	register("plan", "show how many blocks fit on the GPU and what the plan puts where", runPlan)
	register("devices", "list GPUs with what they report and the budget derived from it", runDevices)
}

// planFlags are shared by every command that loads or plans a model.
type planFlags struct {
	gpuLayers string
	ctx       int
	kvType    string
	fs        *flag.FlagSet
}

func addPlanFlags(fs *flag.FlagSet) *planFlags {
	p := &planFlags{fs: fs}
	fs.StringVar(&p.gpuLayers, "gpu-layers", "", "blocks to put on the GPU: N or auto (default: $MINFER_GPU_LAYERS, else auto). Minfer offloads the FIRST N blocks")
	fs.IntVar(&p.ctx, "ctx", 0, fmt.Sprintf("context length in tokens (default: the trained length, at most %d)", core.DefaultCtx))
	fs.StringVar(&p.kvType, "kv-type", "f16", "KV cache element type: f16 or f32")
	return p
}

func (p *planFlags) options(e Env) (core.PlanOptions, error) {
	set := false
	p.fs.Visit(func(f *flag.Flag) {
		if f.Name == "gpu-layers" {
			set = true
		}
	})
	req, err := offload.ParseRequest(p.gpuLayers, set, e.LookupEnv)
	if err != nil {
		return core.PlanOptions{}, err
	}
	var kv core.KVCache
	switch strings.ToLower(p.kvType) {
	case "f16":
		kv = core.KVCacheF16
	case "f32":
		kv = core.KVCacheF32
	default:
		return core.PlanOptions{}, usagef("--kv-type %q: want f16 or f32", p.kvType)
	}
	if p.ctx < 0 {
		return core.PlanOptions{}, usagef("--ctx %d: want a positive length", p.ctx)
	}
	return core.PlanOptions{GPULayers: req, Ctx: p.ctx, KVCache: kv, Env: e.LookupEnv, Device: deviceFrom(e)}, nil
}

// deviceFrom answers the device question through the command's own
// environment, so MINFER_FAKE_DEVICE works in tests as in a shell.
func deviceFrom(e Env) func() devices.DeviceMemory {
	return func() devices.DeviceMemory {
		if v, ok := e.LookupEnv(devices.FakeDeviceEnv); ok && v != "" {
			dm, err := devices.ParseFakeDevice(v)
			if err != nil {
				return devices.QueryFailed{Err: err}
			}
			return dm
		}
		return core.QueryDevice()
	}
}

func runPlan(e Env, args []string) error {
	fs := newFlags("plan", "FILE.gguf", e)
	pf := addPlanFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	path, err := oneFile(fs, args)
	if err != nil {
		return err
	}
	opts, err := pf.options(e)
	if err != nil {
		return err
	}
	info, err := core.Inspect(path)
	if err != nil {
		return err
	}
	v, err := core.Plan(info, opts)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.Stdout, planjson.FromView(v))
	}
	return writePlan(e.Stdout, v)
}

func writePlan(w io.Writer, v *core.PlanView) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, a...)) }
	row("model", "%s (%d blocks)", v.Info.Name, v.Info.NLayers)
	row("device", "%s", v.Device)
	if v.BudgetErr != nil {
		row("weight budget", "unknown: %v", v.BudgetErr)
	} else {
		row("weight budget", "%s", v.WeightBudget)
	}
	row("weights fit", "%s", fitText(v.WeightFit, v.Info.NLayers))
	row("auto fit", "%s (with the KV cache and activations passing the device gate)", fitText(v.Fit, v.Info.NLayers))
	row("request", "%s", v.Request)
	row("plan", "%s (Minfer offloads the FIRST blocks; llama.cpp and Ollama count from the last)", v.Plan)
	if v.Note != "" {
		row("note", "%s", v.Note)
	}
	row("context", "%d tokens, KV cache %s", v.Ctx, v.KVType)
	row("on the device", "weights %s + KV %s + activations %s = %s",
		alloc.MiB(v.DeviceWeights), alloc.MiB(v.DeviceKV), alloc.MiB(v.Activations), alloc.MiB(v.DeviceTotal()))
	row("on the CPU", "weights %s (mapped) + KV %s", alloc.MiB(v.HostWeights), alloc.MiB(v.HostKV))
	if v.KVSaved > 0 {
		row("sliding window", "%d of %d blocks keep a ring of %d positions (window %d + one %d-token step): KV %s less than every position in every block",
			v.H.SlidingBlocks(), v.H.NLayer, v.H.SlidingWindow+core.MaxUBatch, v.H.SlidingWindow, core.MaxUBatch, alloc.MiB(v.KVSaved))
	}
	row("activations", "%s measured for a %d-token prefill at full context", alloc.MiB(v.Activations), min(core.MaxUBatch, v.Ctx))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nblock  weight bytes  placement\n")
	for i, b := range v.Info.BlockBytes {
		where := "CPU"
		if v.Plan.OnDevice(i) {
			where = "GPU"
		}
		fmt.Fprintf(w, "%5d  %12d  %s\n", i, b, where)
	}
	where := "CPU"
	if v.Plan.DeviceHoldsUnblocked() {
		where = "GPU"
	}
	fmt.Fprintf(w, "%5s  %12d  %s\n", "out", v.Info.UnblockedBytes, where)
	for _, warn := range v.Warnings {
		fmt.Fprintf(w, "\nwarning: %s\n", warn)
	}
	if v.Refusal != nil {
		fmt.Fprintf(w, "\nrefused: %v\n", v.Refusal)
	}
	return nil
}

func fitText(fit, n int) string {
	switch {
	case fit > n:
		return fmt.Sprintf("all %d blocks + output", n)
	case fit == 0:
		return "nothing fits"
	}
	return fmt.Sprintf("blocks 0–%d (%d of %d)", fit-1, fit, n)
}

func runDevices(e Env, args []string) error {
	fs := newFlags("devices", "", e)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("takes no arguments")
	}
	r := devices.Collect()
	defer devices.Close()
	type gpuBudget struct {
		Device      devices.DeviceMemory `json:"device"`
		BudgetBytes *int64               `json:"budget_bytes"`
		Budget      string               `json:"budget"`
	}
	var budgets []gpuBudget
	for _, g := range r.GPUs {
		b := alloc.BudgetDecision(g)
		gb := gpuBudget{Device: g, Budget: b.String()}
		if b.Limited {
			gb.BudgetBytes = &b.Bytes
		}
		if b.Warning != "" {
			gb.Budget = b.Warning
		}
		budgets = append(budgets, gb)
	}
	if *asJSON {
		return writeJSON(e.Stdout, struct {
			devices.Report
			Budgets []gpuBudget `json:"budgets"`
			Compute []string    `json:"compute"`
		}{r, budgets, core.ComputeStatus()})
	}
	if err := r.WriteText(e.Stdout); err != nil {
		return err
	}
	for _, b := range budgets {
		if _, ok := b.Device.(devices.Reported); ok {
			fmt.Fprintf(e.Stdout, "budget: %s\n", b.Budget)
		}
	}
	if _, none := r.Primary.(devices.NoDevice); none {
		// NVML had no answer (a build without cgo): the compute driver's.
		if dm, ok := core.QueryDevice().(devices.Reported); ok {
			fmt.Fprintf(e.Stdout, "CUDA driver: %s\nbudget: %s\n", dm, alloc.BudgetDecision(dm))
		}
	}
	for _, line := range core.ComputeStatus() {
		fmt.Fprintf(e.Stdout, "compute: %s\n", line)
	}
	return nil
}
