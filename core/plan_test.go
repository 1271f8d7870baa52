package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/internal/ggtest"
)

func planFor(t *testing.T, model string, dm devices.DeviceMemory, req offload.Request, ctx int) (*PlanView, error) {
	t.Helper()
	info, err := Inspect(ggtest.Path(t, model))
	if err != nil {
		t.Fatal(err)
	}
	return Plan(info, PlanOptions{GPULayers: req, Ctx: ctx, Device: func() devices.DeviceMemory { return dm }, Env: func(string) (string, bool) { return "", false }})
}

const mib = 1 << 20

// TestPlanWarnsWhenKVAndActivationsOutgrowTheHeldBackQuarter: the weights
// fit the ¾ budget, but a long context's KV cache plus the measured
// activations do not fit the quarter held back for them.
func TestPlanWarnsWhenKVAndActivationsOutgrowTheHeldBackQuarter(t *testing.T) {
	dm := devices.Reported{Name: "Small GPU", Free: 64 * mib, Total: 64 * mib}
	v, err := planFor(t, "synth/synth-llama-Q8_0.gguf", dm, offload.Request{Auto: true}, 512)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Warnings) != 0 || v.Refusal != nil {
		t.Errorf("short context: warnings %q, refusal %v", v.Warnings, v.Refusal)
	}
	// Same device, longer context: the two blocks' KV cache and the
	// activations outgrow the 16 MiB quarter while the whole still passes.
	info := v.Info
	info.HParams.NCtxTrain = 1 << 16
	v, err = Plan(info, PlanOptions{GPULayers: offload.Request{Layers: 2}, Ctx: 8192, Device: func() devices.DeviceMemory { return dm }, Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if v.Refusal != nil || len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "held-back quarter") {
		t.Fatalf("KV %d + activations %d on a 64 MiB device: refusal %v, warnings %q", v.DeviceKV, v.Activations, v.Refusal, v.Warnings)
	}
	// Auto at a context whose activations cannot fit backs off and says so.
	v, err = Plan(info, PlanOptions{GPULayers: offload.Request{Auto: true}, Ctx: 1 << 16, Device: func() devices.DeviceMemory { return dm }, Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if v.Refusal != nil || v.Fit >= v.WeightFit || !strings.Contains(v.Note, "lowered") {
		t.Errorf("auto at 64K context: fit %d of weight fit %d, note %q, refusal %v", v.Fit, v.WeightFit, v.Note, v.Refusal)
	}
}

// TestForcedOverBudgetPlanIsRefusedWithTheFourNumbers and the refusal's
// offer: the largest block count that passes the gate.
func TestForcedOverBudgetPlanIsRefusedWithTheFourNumbers(t *testing.T) {
	dm := devices.Reported{Name: "Tiny GPU", Free: 8 * mib, Total: 8 * mib}
	v, err := planFor(t, "synth/synth-llama-Q8_0.gguf", dm, offload.Request{Layers: 3}, 512)
	if err != nil {
		t.Fatal(err)
	}
	if v.Refusal == nil {
		t.Fatalf("plan %v with %d device bytes on a 6 MiB budget was not refused", v.Plan, v.DeviceTotal())
	}
	for _, w := range []string{"weights", "pooled", "request", "budget 6 MiB"} {
		if !strings.Contains(v.Refusal.Error(), w) {
			t.Errorf("refusal %q does not name %s", v.Refusal, w)
		}
	}
	n := v.LargestFitting()
	if n >= 3 {
		t.Errorf("LargestFitting %d", n)
	}
	v2, _ := planFor(t, "synth/synth-llama-Q8_0.gguf", dm, offload.Request{Layers: n}, 512)
	if v2.Refusal != nil {
		t.Errorf("the offered %d blocks are refused too: %v", n, v2.Refusal)
	}
	if n < 2 {
		v3, _ := planFor(t, "synth/synth-llama-Q8_0.gguf", dm, offload.Request{Layers: n + 1}, 512)
		if v3.Refusal == nil {
			t.Errorf("%d blocks pass the gate but LargestFitting said %d", n+1, n)
		}
	}
	// Load refuses the same plan before touching anything.
	o := cpuOnly()
	o.Device = func() devices.DeviceMemory { return dm }
	o.GPULayers = offload.Request{Layers: 3}
	o.Ctx = 512
	var r interface{ Over() int64 }
	if _, err := Load(t.Context(), v.Info.Path, o, nil); err == nil || !errors.As(err, &r) {
		t.Errorf("load of a refused plan: %v", err)
	}
}

func TestFailedQueryRefusesAutoButNotACount(t *testing.T) {
	dm := devices.QueryFailed{Err: errors.New("NVML ERROR_NO_PERMISSION")}
	if _, err := planFor(t, "models/stories260K.gguf", dm, offload.Request{Auto: true}, 0); err == nil || !strings.Contains(err.Error(), "ERROR_NO_PERMISSION") || !errors.Is(err, offload.ErrDeviceQuery) {
		t.Errorf("auto after a failed query: %v", err)
	}
	v, err := planFor(t, "models/stories260K.gguf", dm, offload.Request{Layers: 2}, 0)
	if err != nil || v.Plan.GPULayers != 2 || v.Refusal != nil {
		t.Errorf("explicit count after a failed query: %v, %+v", err, v)
	}
}

// TestAutoNeverProposesAPlanTheGateRefuses: when the weights fit the ¾
// budget but their KV cache and activations would not pass the gate, auto
// backs off to the largest plan that does, and says why.
func TestAutoNeverProposesAPlanTheGateRefuses(t *testing.T) {
	for _, freeMiB := range []uint64{8, 10, 12, 16, 24, 64, 1024} {
		dm := devices.Reported{Name: "GPU", Free: freeMiB * mib, Total: 2048 * mib}
		v, err := planFor(t, "synth/synth-llama-Q8_0.gguf", dm, offload.Request{Auto: true}, 512)
		if err != nil {
			t.Fatal(err)
		}
		if v.Refusal != nil {
			t.Errorf("%d MiB free: auto plan %v refused: %v", freeMiB, v.Plan, v.Refusal)
		}
		if v.Fit > v.WeightFit || v.Plan.GPULayers != v.Fit {
			t.Errorf("%d MiB free: fit %d, weight fit %d, plan %v", freeMiB, v.Fit, v.WeightFit, v.Plan)
		}
		if v.Fit < v.WeightFit && !strings.Contains(v.Note, "lowered") {
			t.Errorf("%d MiB free: lowered without a note", freeMiB)
		}
	}
}
