package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/internal/alloc"
)

// LoadedModel is what the worker reported after a load.
type LoadedModel struct {
	Path string
	// Planned is the plan the load was asked for; Report says where the
	// blocks actually run (all on the CPU when it fell back).
	Planned  offload.Plan
	Report   offload.Report
	Memory   []alloc.MemoryReport
	NCtx     int
	Template bool
	Source   chat.Source
	// the choices it was loaded with, to offer Reload when they change
	auto      bool
	layers    int
	ctx       int
	budgetMiB int
}

// CanLoad: a plan exists and nothing is loading.
func (c *Controller) CanLoad() bool {
	return c.info != nil && c.phase != PhaseLoading && (c.phase != PhaseReady || c.NeedsReload())
}

// NeedsReload: the slider, context or budget changed since the load.
func (c *Controller) NeedsReload() bool {
	l := c.loaded
	if l == nil || c.phase != PhaseReady {
		return false
	}
	if l.ctx != c.ctxLen || l.budgetMiB != c.budgetMiB || l.auto != c.auto {
		return true
	}
	return !c.auto && l.layers != c.layers
}

// Load asks the worker to load the planned model. A plan over the budget
// is refused here with the same numbers core.Load would refuse with.
func (c *Controller) Load() {
	if !c.CanLoad() {
		return
	}
	if c.view == nil {
		if c.planErr != nil && errors.Is(c.planErr, offload.ErrDeviceQuery) {
			c.problem(DeviceQueryProblem{Err: c.deviceErr()})
		} else if c.planErr != nil {
			c.problem(LoadProblem{Err: c.planErr})
		}
		return
	}
	if c.view.Refusal != nil {
		c.problem(RefusalProblem{Refusal: c.view.Refusal, Fitting: c.view.LargestFitting()})
		return
	}
	c.cancelGeneration()
	c.StopServing()
	ctx, cancel := context.WithCancel(context.Background())
	c.loadCancel = cancel
	c.loadID++
	c.phase = PhaseLoading
	c.progressDone, c.progressTotal = 0, 0
	c.loaded, c.loadLog = nil, nil
	c.loadingPlan = c.view.Plan
	opts := core.LoadOptions{PlanOptions: c.planOptions(), Threads: c.cfg.Threads}
	c.worker.send(loadRequest{id: c.loadID, ctx: ctx, path: c.info.Path, opts: opts})
	c.changed(ChangePlan | ChangeLoad)
}

// Reload opens path again and, when it still plans, loads it: the file
// changed dialog's offer. A file now damaged is the usual FileProblem.
func (c *Controller) Reload(path string) {
	c.OpenFile(path)
	if c.info != nil && c.info.Path == path && c.phase == PhasePlanned {
		c.Load()
	}
}

// UseBlocks takes the refusal dialog's offer and loads with n blocks.
func (c *Controller) UseBlocks(n int) {
	if c.info == nil {
		return
	}
	c.auto, c.layers = false, n
	c.replan()
	c.changed(ChangePlan)
	c.Load()
}

// dropLoad forgets the loaded model and any load in flight (its events
// are stale from here on): a new file or a server replaces it.
func (c *Controller) dropLoad() {
	if c.loadCancel != nil {
		c.loadCancel()
		c.loadCancel = nil
	}
	c.loadID++
	c.loaded, c.loadLog = nil, nil
}

// CancelLoad stops a load in progress; the model stays planned.
func (c *Controller) CancelLoad() {
	if c.phase == PhaseLoading && c.loadCancel != nil {
		c.loadCancel()
	}
}

// Progress is the load's fraction done (0..1).
func (c *Controller) Progress() float64 {
	if c.progressTotal <= 0 {
		return 0
	}
	return float64(c.progressDone) / float64(c.progressTotal)
}

// ProgressText is "12.3 of 40.0 MiB".
func (c *Controller) ProgressText() string {
	return fmt.Sprintf("loading weights: %s of %s", HumanBytes(c.progressDone), HumanBytes(c.progressTotal))
}

// Loaded is the loaded model (nil unless Ready).
func (c *Controller) Loaded() *LoadedModel { return c.loaded }

// ReportText is the details pane: where blocks landed, measured bytes, the
// fallback reason, the memory accounting and the load's warnings.
func (c *Controller) ReportText() string {
	if c.remote != nil {
		return c.remoteReport()
	}
	l := c.loaded
	if l == nil {
		return ""
	}
	var b strings.Builder
	if l.Report.Fallback != "" {
		// Say what was asked for: the report's own plan is the one that runs.
		fmt.Fprintf(&b, "asked for: %s on the GPU\n", placement(l.Planned))
	}
	b.WriteString(l.Report.String())
	for _, m := range l.Memory {
		fmt.Fprintf(&b, "memory %s: weights %s · pools %s (KV %s) · budget %s\n", m.Backend, MiB(m.WeightsBytes), MiB(m.PoolBytes), MiB(m.PersistentBytes), m.Budget)
	}
	fmt.Fprintf(&b, "context %d tokens · %s\n", l.NCtx, l.Source)
	for _, s := range c.loadLog {
		b.WriteString(s + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// placement is "5/5 blocks + output".
func placement(p offload.Plan) string {
	s := fmt.Sprintf("%d/%d blocks", p.DeviceBlocks(), p.NLayers)
	if p.DeviceHoldsUnblocked() {
		s += " + output"
	}
	return s
}

// Summary is the one line the offload panel collapses to when Ready.
func (c *Controller) Summary() string {
	if c.remote != nil {
		return c.remoteSummary()
	}
	l := c.loaded
	if l == nil {
		return ""
	}
	r := l.Report
	var s string
	switch {
	case r.Fallback != "":
		s = fmt.Sprintf("CPU only — planned %s on GPU, fell back: %s", placement(l.Planned), r.Fallback)
	case r.Plan.DeviceBlocks() == 0 && !r.Plan.DeviceHoldsUnblocked():
		s = fmt.Sprintf("CPU only · %s weights", HumanBytes(r.HostBytes))
	default:
		s = fmt.Sprintf("%s on GPU · %s", placement(r.Plan), HumanBytes(r.DeviceBytes))
	}
	s += fmt.Sprintf(" · ctx %d", l.NCtx)
	if c.NeedsReload() {
		s += " · settings changed: Reload to apply"
	}
	if c.serveURL != "" {
		s += " · serving on " + c.serveURL
	}
	return s
}
