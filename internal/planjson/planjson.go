// Package planjson is the plan and memory report as JSON, shared by
// `minfer plan --json` and the API server's GET /minfer/plan.
package planjson

import (
	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/internal/alloc"
)

// Plan is the plan report as JSON (`minfer plan --json`, the server's
// GET /minfer/plan).
type Plan struct {
	Model          string         `json:"model"`
	Blocks         int            `json:"blocks"`
	BlockBytes     []int64        `json:"block_bytes"`
	UnblockedBytes int64          `json:"unblocked_bytes"`
	Device         any            `json:"device"`
	WeightBudget   uint64         `json:"weight_budget_bytes"`
	BudgetSource   string         `json:"weight_budget_source"`
	BudgetError    string         `json:"budget_error,omitempty"`
	WeightFit      int            `json:"weight_fit_gpu_layers"`
	AutoFit        int            `json:"auto_fit_gpu_layers"`
	Request        string         `json:"request"`
	GPULayers      int            `json:"gpu_layers"`
	DeviceBlocks   int            `json:"device_blocks"`
	OutputOnDevice bool           `json:"output_on_device"`
	Note           string         `json:"note,omitempty"`
	Ctx            int            `json:"ctx"`
	KVType         string         `json:"kv_type"`
	Weights        map[string]int `json:"-"`
	DeviceWeights  int64          `json:"device_weight_bytes"`
	HostWeights    int64          `json:"host_weight_bytes"`
	DeviceKV       int64          `json:"device_kv_bytes"`
	HostKV         int64          `json:"host_kv_bytes"`
	KVSaved        int64          `json:"kv_saved_by_sliding_window_bytes,omitempty"`
	Activations    int64          `json:"activation_bytes"`
	Refusal        string         `json:"refusal,omitempty"`
	Warnings       []string       `json:"warnings,omitempty"`
}

// FromView reports a plan.
func FromView(v *core.PlanView) Plan {
	o := Plan{
		Model: v.Info.Name, Blocks: v.Info.NLayers, BlockBytes: v.Info.BlockBytes, UnblockedBytes: v.Info.UnblockedBytes,
		Device: v.Device, WeightBudget: v.WeightBudget.Bytes, BudgetSource: v.WeightBudget.Source,
		WeightFit: v.WeightFit, AutoFit: v.Fit, Request: v.Request.String(), GPULayers: v.Plan.GPULayers, DeviceBlocks: v.Plan.DeviceBlocks(),
		OutputOnDevice: v.Plan.DeviceHoldsUnblocked(), Note: v.Note, Ctx: v.Ctx, KVType: v.KVType.String(),
		DeviceWeights: v.DeviceWeights, HostWeights: v.HostWeights, DeviceKV: v.DeviceKV, HostKV: v.HostKV, KVSaved: v.KVSaved,
		Activations: v.Activations, Warnings: v.Warnings,
	}
	if v.BudgetErr != nil {
		o.BudgetError = v.BudgetErr.Error()
	}
	if v.Refusal != nil {
		o.Refusal = v.Refusal.Error()
	}
	return o
}

// Loaded is the report of a loaded model: the plan it was loaded with,
// where its blocks landed (measured) and each backend's memory now.
type Loaded struct {
	Plan    Plan                 `json:"plan"`
	Offload Offload              `json:"offload"`
	Memory  []alloc.MemoryReport `json:"memory"`
}

// Offload is offload.Report as JSON.
type Offload struct {
	Summary     string `json:"summary"`
	Backend     string `json:"backend,omitempty"`
	DeviceName  string `json:"device_name,omitempty"`
	DeviceBytes int64  `json:"device_weight_bytes"`
	HostBytes   int64  `json:"host_weight_bytes"`
	Fallback    string `json:"fallback,omitempty"`
}

// FromSession reports a loaded session. Call it on the goroutine that
// owns the session.
func FromSession(s *core.Session) Loaded {
	r := s.OffloadReport()
	return Loaded{Plan: FromView(s.View), Offload: offloadJSON(r), Memory: s.MemoryReport()}
}

func offloadJSON(r offload.Report) Offload {
	return Offload{Summary: r.String(), Backend: r.Backend, DeviceName: r.DeviceName, DeviceBytes: r.DeviceBytes, HostBytes: r.HostBytes, Fallback: r.Fallback}
}
