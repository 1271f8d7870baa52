package app

import (
	"fmt"
	"strings"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/devices"
)

// ReadoutLevel colours the plan readout.
type ReadoutLevel int

const (
	ReadoutOK ReadoutLevel = iota
	ReadoutWarn
	ReadoutOver
)

// CardLines are the model card: title and two lines of facts.
func (c *Controller) CardLines() (title, line1, line2 string) {
	i := c.info
	if i == nil {
		return "", "", ""
	}
	tmpl := "no chat template (plain completion)"
	if i.ChatTemplate {
		tmpl = "chat template: yes"
	}
	line1 = fmt.Sprintf("%s · %s params · %s · %s · %d blocks", i.Arch, HumanCount(i.Params), i.Quant, HumanBytes(i.FileSize), i.NLayers)
	if i.ExpertCount > 0 {
		line1 += fmt.Sprintf(" · %d experts, %d used", i.ExpertCount, i.ExpertUsed)
	}
	if i.SlidingWindow > 0 {
		line1 += fmt.Sprintf(" · sliding window %d on %d blocks", i.SlidingWindow, i.SlidingBlocks)
	}
	line2 = fmt.Sprintf("trained ctx %d · %s · tokenizer %s, %d tokens · file type %s", i.NCtxTrain, tmpl, i.TokenizerModel, i.VocabSize, i.FileType)
	return i.Name, line1, line2
}

// DeviceLines describe the device and the budget.
func (c *Controller) DeviceLines() (device, budget string) {
	switch d := c.device.(type) {
	case devices.Reported:
		name := d.Name
		if name == "" {
			name = d.Label()
		}
		device = fmt.Sprintf("%s · free %s of %s", name, HumanBytes(int64(d.Free)), HumanBytes(int64(d.Total)))
	case devices.QueryFailed:
		device = fmt.Sprintf("Could not read GPU memory: %v", d.Err)
	case devices.NoDevice:
		device = fmt.Sprintf("No GPU found (%s)", d.Reason)
	case nil:
		return "", ""
	}
	switch {
	case c.view != nil && c.view.BudgetErr == nil && c.view.WeightBudget.Source != "":
		if _, none := c.device.(devices.NoDevice); none && c.budgetMiB == 0 {
			budget = "everything runs on the CPU"
		} else {
			budget = fmt.Sprintf("budget %s (%s)", MiB(int64(c.view.WeightBudget.Bytes)), c.view.WeightBudget.Source)
		}
	case c.budgetMiB > 0:
		budget = fmt.Sprintf("budget %s (set by you, as %s)", MiB(int64(c.budgetMiB)<<20), offload.EnvGPUMem)
	default:
		budget = "no budget: auto-fit needs the device's answer"
	}
	return device, budget
}

// SliderText names the slider's position.
func (c *Controller) SliderText() string {
	if c.info == nil {
		return ""
	}
	n := c.info.NLayers
	p := offload.NewPlan(c.GPULayers(), n)
	s := fmt.Sprintf("%d of %d blocks", p.DeviceBlocks(), n)
	if p.DeviceHoldsUnblocked() {
		s += " + output"
	}
	if p.GPULayers == 0 {
		s = fmt.Sprintf("0 of %d blocks (CPU only)", n)
	}
	if c.auto && c.view != nil {
		s += " · auto"
	}
	return s
}

// Readout is the live plan summary under the slider.
func (c *Controller) Readout() (string, ReadoutLevel) {
	if c.info == nil {
		return "", ReadoutOK
	}
	v := c.view
	if v == nil {
		if c.planErr != nil {
			return fmt.Sprintf("Auto-fit needs the device's answer (%v). Choose Run on CPU, Set a budget…, or move the slider.", c.deviceErr()), ReadoutWarn
		}
		return "", ReadoutOK
	}
	n := v.Plan.NLayers
	k := v.Plan.DeviceBlocks()
	if v.DeviceTotal() == 0 {
		return fmt.Sprintf("no blocks on GPU (0/%d) · everything runs on the CPU · KV cache %s in host memory", n, MiB(v.HostKV)) + slidingSaving(v), ReadoutOK
	}
	var b strings.Builder
	if k > 0 {
		fmt.Fprintf(&b, "%s on GPU (%d/%d)", offload.BlockRange(0, k-1), k, n)
	} else {
		fmt.Fprintf(&b, "no blocks on GPU (0/%d)", n)
	}
	if v.Plan.DeviceHoldsUnblocked() {
		b.WriteString(" + output")
	}
	level := ReadoutOK
	if v.GateBudget.Limited {
		fmt.Fprintf(&b, " · %s of %s budget · KV cache %s · activations %s", MiB(v.DeviceWeights), MiB(v.GateBudget.Bytes), MiB(v.DeviceKV), MiB(v.Activations))
		if v.Refusal != nil {
			fmt.Fprintf(&b, " · over budget by %s", MiB(v.Refusal.Over()))
			level = ReadoutOver
		} else {
			fmt.Fprintf(&b, " · headroom %s", MiB(v.GateBudget.Bytes-v.DeviceTotal()))
		}
	} else {
		fmt.Fprintf(&b, " · %s weights · KV cache %s · activations %s · no budget enforced (the device did not answer)", MiB(v.DeviceWeights), MiB(v.DeviceKV), MiB(v.Activations))
		level = ReadoutWarn
	}
	if len(v.Warnings) > 0 && level == ReadoutOK {
		level = ReadoutWarn
	}
	b.WriteString(slidingSaving(v))
	return b.String(), level
}

// slidingSaving is the readout's note on the KV memory the sliding-window
// blocks' rings save (Gemma 2/3, Phi-3), or "".
func slidingSaving(v *core.PlanView) string {
	if v.KVSaved <= 0 {
		return ""
	}
	return fmt.Sprintf(" · sliding window (%d of %d blocks) saves %s of KV cache", v.H.SlidingBlocks(), v.H.NLayer, MiB(v.KVSaved))
}

// Warnings are the plan's cautions (KV + activations beyond the held-back
// quarter, a clamped request).
func (c *Controller) Warnings() []string {
	if c.view == nil {
		return nil
	}
	w := append([]string(nil), c.view.Warnings...)
	if c.view.Note != "" {
		w = append(w, c.view.Note)
	}
	if c.info != nil && c.info.TemplateProblem != "" {
		w = append(w, c.info.TemplateProblem)
	}
	return w
}
