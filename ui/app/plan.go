package app

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/devices"
)

// Phase is the current step.
func (c *Controller) Phase() Phase { return c.phase }

// Info is the inspected model (nil in the empty state).
func (c *Controller) Info() *core.ModelInfo { return c.info }

// Device is the device's answer for the open model.
func (c *Controller) Device() devices.DeviceMemory { return c.device }

// PlanView is the current plan (nil when auto could not plan).
func (c *Controller) PlanView() *core.PlanView { return c.view }

// PlanErr is why there is no plan (a failed device query with auto).
func (c *Controller) PlanErr() error { return c.planErr }

// Auto reports whether the block count follows the auto-fit.
func (c *Controller) Auto() bool { return c.auto }

// BudgetMiB is the user's budget from "Set a budget…" (0: none).
func (c *Controller) BudgetMiB() int { return c.budgetMiB }

// OpenFile inspects a file and plans it. A file that is not a usable model
// is reported as a FileProblem and leaves everything as it was.
func (c *Controller) OpenFile(path string) {
	info, err := core.Inspect(path)
	if err == nil && info.Problem != "" {
		err = fmt.Errorf("%s (%s, architecture %q) cannot be run: %s", info.Name, filepath.Base(path), info.Arch, info.Problem)
	}
	if err != nil {
		c.problem(FileProblem{Path: path, Err: err})
		return
	}
	// A new model replaces the old one: stop its work and free it.
	c.StopServing()
	c.remote = nil
	c.cancelGeneration()
	hadModel := c.loaded != nil || c.phase == PhaseLoading || c.phase == PhaseReady
	c.dropLoad()
	if hadModel {
		c.worker.send(unloadRequest{})
	}
	c.progressDone, c.progressTotal = 0, 0
	c.info = info
	c.phase = PhasePlanned
	c.PanelExpanded = true
	c.auto, c.layers, c.budgetMiB = true, 0, 0
	// MINFER_GPU_LAYERS sets the starting point, as it does for the CLI; a
	// spelling that is not a block count is reported, and auto is kept.
	req, reqErr := offload.ParseRequest("", false, c.cfg.Env)
	if reqErr == nil && !req.Auto {
		c.auto, c.layers = false, min(req.Layers, info.NLayers+1)
	}
	c.ctxLen = defaultCtx(info.NCtxTrain)
	c.device = c.cfg.Device()
	c.addRecent(path)
	c.replan()
	c.changed(ChangeModel | ChangePlan | ChangeLoad | ChangeRecent)
	if c.planErr != nil && errors.Is(c.planErr, offload.ErrDeviceQuery) {
		c.problem(DeviceQueryProblem{Err: c.deviceErr()})
	}
	if reqErr != nil {
		c.problem(LoadProblem{Err: reqErr})
	}
}

// deviceErr is the device's own error (NVML's), not the wrapped plan error.
func (c *Controller) deviceErr() error {
	if q, ok := c.device.(devices.QueryFailed); ok && q.Err != nil {
		return q.Err
	}
	return c.planErr
}

func defaultCtx(trained int) int {
	choices := ContextChoices(trained)
	want := core.DefaultCtx
	if trained > 0 {
		want = min(trained, core.DefaultCtx)
	}
	best := choices[0]
	for _, n := range choices {
		if n <= want {
			best = n
		}
	}
	return best
}

// ContextChoices are the context lengths offered: powers of two from 512 up
// to the trained length, and the trained length itself.
func ContextChoices(trained int) []int {
	if trained <= 0 {
		trained = core.DefaultCtx
	}
	if trained <= 512 {
		return []int{trained}
	}
	var out []int
	for n := 512; n < trained; n *= 2 {
		out = append(out, n)
	}
	return append(out, trained)
}

func (c *Controller) planOptions() core.PlanOptions {
	req := offload.Request{Auto: true, Source: "auto"}
	if !c.auto {
		req = offload.Request{Layers: c.layers, Source: "slider"}
	}
	dev := c.device
	budget := c.budgetMiB
	env := c.cfg.Env
	return core.PlanOptions{
		GPULayers: req,
		Ctx:       c.ctxLen,
		Device:    func() devices.DeviceMemory { return dev },
		Env: func(k string) (string, bool) {
			if k == offload.EnvGPUMem && budget > 0 {
				return strconv.Itoa(budget), true
			}
			return env(k)
		},
	}
}

func (c *Controller) replan() {
	if c.info == nil {
		return
	}
	v, err := core.Plan(c.info, c.planOptions())
	c.planErr = err
	if err != nil {
		c.view = nil
		return
	}
	c.view = v
}

// SliderMax is the slider's top: every block and the output (NLayers+1).
func (c *Controller) SliderMax() int {
	if c.info == nil {
		return 0
	}
	return c.info.NLayers + 1
}

// SliderEnabled: no GPU means nothing to choose (the slider sits at 0);
// while loading the plan is locked.
func (c *Controller) SliderEnabled() bool {
	if c.info == nil || c.phase == PhaseLoading {
		return false
	}
	_, none := c.device.(devices.NoDevice)
	return !none || c.budgetMiB > 0
}

// GPULayers is what the slider shows: the plan's count (the fit when auto).
func (c *Controller) GPULayers() int {
	if c.view != nil {
		return c.view.Plan.GPULayers
	}
	if c.auto {
		return 0
	}
	return c.layers
}

// SetGPULayers is the slider: an explicit count, which plans even when the
// device query failed.
func (c *Controller) SetGPULayers(n int) {
	if c.info == nil || !c.SliderEnabled() {
		return
	}
	n = min(max(n, 0), c.SliderMax())
	if !c.auto && c.layers == n {
		return
	}
	if c.auto && c.view != nil && c.view.Plan.GPULayers == n {
		return // the slider echoing the fit is not a choice
	}
	c.auto, c.layers = false, n
	c.replan()
	c.changed(ChangePlan)
}

// AutoFit returns to the auto-fit, asking the device afresh.
func (c *Controller) AutoFit() {
	if c.info == nil || c.phase == PhaseLoading {
		return
	}
	c.auto = true
	c.device = c.cfg.Device()
	c.replan()
	c.changed(ChangeModel | ChangePlan)
	if c.planErr != nil && errors.Is(c.planErr, offload.ErrDeviceQuery) {
		c.problem(DeviceQueryProblem{Err: c.deviceErr()})
	}
}

// RunOnCPU plans zero blocks on the device (the device-query dialog).
func (c *Controller) RunOnCPU() {
	if c.info == nil {
		return
	}
	c.auto, c.layers = false, 0
	c.replan()
	c.changed(ChangePlan)
}

// SetBudget sets a budget in MiB like MINFER_GPU_MEM and returns to auto.
func (c *Controller) SetBudget(mib int) error {
	if mib <= 0 {
		return fmt.Errorf("budget %d MiB: want a whole number of MiB above 0", mib)
	}
	if c.info == nil {
		return errors.New("no model is open")
	}
	c.budgetMiB = mib
	c.auto = true
	c.replan()
	c.changed(ChangeModel | ChangePlan)
	return nil
}

// CtxLen is the chosen context length.
func (c *Controller) CtxLen() int { return c.ctxLen }

// SetCtx chooses the context length.
func (c *Controller) SetCtx(n int) {
	if c.info == nil || n <= 0 || n == c.ctxLen || c.phase == PhaseLoading {
		return
	}
	c.ctxLen = n
	c.replan()
	c.changed(ChangePlan)
}
