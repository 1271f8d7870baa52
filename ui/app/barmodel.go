package app

import (
	"fmt"

	"github.com/minfer/minfer/core"
)

// SegKind is how a bar segment is drawn.
type SegKind int

const (
	SegDevice      SegKind = iota // weights the plan puts on the GPU
	SegHost                       // weights left on the CPU (grey)
	SegKV                         // the device KV cache (lighter)
	SegActivations                // the device activation pool (lighter still)
)

// BarSegment is one piece of the offload bar, in bytes along the bar.
type BarSegment struct {
	Label string
	Bytes int64
	Start int64
	Kind  SegKind
	Block int // block index; -1 for the unblocked tensors, -2 for KV/activations
}

// OnDevice says whether the segment is on the GPU.
func (s BarSegment) OnDevice() bool { return s.Kind != SegHost }

// BarModel is everything the bar draws, computed from a plan in plain Go.
type BarModel struct {
	Segs   []BarSegment
	Budget int64 // 0: no budget line
	Scale  int64 // bytes across the full width
	// FitAt is the byte offset where the auto-fit prefix ends (-1: none).
	FitAt int64
	// BudgetOffScale: the budget is far beyond everything drawn, so the
	// scale follows the model and the line is not drawn.
	BudgetOffScale bool
}

// OffloadBarModel lays the plan out: the device part first (the first
// blocks, then the unblocked tensors when every block is there), the KV
// cache and activations for the chosen context after those device weights
// in lighter shades, then the blocks left on the CPU in grey, the
// unblocked tensors last.
func OffloadBarModel(v *core.PlanView) BarModel {
	m := BarModel{FitAt: -1}
	if v == nil || v.Info == nil {
		return m
	}
	var pos int64
	add := func(label string, bytes int64, kind SegKind, block int) {
		m.Segs = append(m.Segs, BarSegment{Label: label, Bytes: bytes, Start: pos, Kind: kind, Block: block})
		pos += bytes
	}
	info := v.Info
	for i, b := range info.BlockBytes {
		if v.Plan.OnDevice(i) {
			add(fmt.Sprintf("block %d", i), b, SegDevice, i)
		}
	}
	if v.Plan.DeviceHoldsUnblocked() {
		add("output, embeddings, final norm", info.UnblockedBytes, SegDevice, -1)
	}
	if v.DeviceTotal() > 0 {
		add(fmt.Sprintf("KV cache at context %d", v.Ctx), v.DeviceKV, SegKV, -2)
		add(fmt.Sprintf("activations (prefill of %d tokens)", min(core.MaxUBatch, v.Ctx)), v.Activations, SegActivations, -2)
	}
	for i, b := range info.BlockBytes {
		if !v.Plan.OnDevice(i) {
			add(fmt.Sprintf("block %d", i), b, SegHost, i)
		}
	}
	if !v.Plan.DeviceHoldsUnblocked() {
		add("output, embeddings, final norm", info.UnblockedBytes, SegHost, -1)
	}
	total := pos
	switch {
	case v.GateBudget.Limited:
		m.Budget = v.GateBudget.Bytes
	case v.BudgetErr == nil && v.WeightBudget.Bytes > 0:
		m.Budget = int64(v.WeightBudget.Bytes)
	}
	m.Scale = max(total, m.Budget)
	if m.Budget > 2*total {
		// A small model on a big GPU: draw the model at a readable size
		// and say the budget is off the bar.
		m.Scale, m.BudgetOffScale = total+total/10, true
	}
	if m.Scale <= 0 {
		m.Scale = 1
	}
	// Where the auto-fit prefix ends: after block Fit-1, or after the
	// unblocked tensors when the fit holds everything.
	switch {
	case v.BudgetErr != nil:
		// no device answer, no auto-fit to mark
	case v.Fit <= 0:
		m.FitAt = 0
	default:
		for _, s := range m.Segs {
			if (v.Fit > info.NLayers && s.Block == -1) || (v.Fit <= info.NLayers && s.Block == v.Fit-1) {
				m.FitAt = s.Start + s.Bytes
			}
		}
	}
	return m
}

// HoverText names a segment for the hover line.
func (s BarSegment) HoverText() string {
	where := "on the GPU"
	if !s.OnDevice() {
		where = "on the CPU"
	}
	return fmt.Sprintf("%s · %s · %s", s.Label, HumanBytes(s.Bytes), where)
}
