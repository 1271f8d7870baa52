//go:build !nogui

package ui

import (
	"fmt"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/minfer/minfer/core"
)

// segKind is how a bar segment is drawn.
type segKind int

const (
	segDevice      segKind = iota // weights the plan puts on the GPU
	segHost                       // weights left on the CPU (grey)
	segKV                         // the device KV cache (lighter)
	segActivations                // the device activation pool (lighter still)
)

// barSegment is one piece of the offload bar, in bytes along the bar.
type barSegment struct {
	Label string
	Bytes int64
	Start int64
	Kind  segKind
	Block int // block index; -1 for the unblocked tensors, -2 for KV/activations
}

func (s barSegment) onDevice() bool { return s.Kind != segHost }

// barModel is everything the bar draws, computed from a plan in plain Go.
type barModel struct {
	Segs   []barSegment
	Budget int64 // 0: no budget line
	Scale  int64 // bytes across the full width
	// FitAt is the byte offset where the auto-fit prefix ends (-1: none).
	FitAt int64
	// BudgetOffScale: the budget is far beyond everything drawn, so the
	// scale follows the model and the line is not drawn.
	BudgetOffScale bool
}

// offloadBarModel lays the plan out: the device part first (the first
// blocks, then the unblocked tensors when every block is there), the KV
// cache and activations for the chosen context after those device weights
// in lighter shades, then the blocks left on the CPU in grey, the
// unblocked tensors last.
func offloadBarModel(v *core.PlanView) barModel {
	m := barModel{FitAt: -1}
	if v == nil || v.Info == nil {
		return m
	}
	var pos int64
	add := func(label string, bytes int64, kind segKind, block int) {
		m.Segs = append(m.Segs, barSegment{Label: label, Bytes: bytes, Start: pos, Kind: kind, Block: block})
		pos += bytes
	}
	info := v.Info
	for i, b := range info.BlockBytes {
		if v.Plan.OnDevice(i) {
			add(fmt.Sprintf("block %d", i), b, segDevice, i)
		}
	}
	if v.Plan.DeviceHoldsUnblocked() {
		add("output, embeddings, final norm", info.UnblockedBytes, segDevice, -1)
	}
	if v.DeviceTotal() > 0 {
		add(fmt.Sprintf("KV cache at context %d", v.Ctx), v.DeviceKV, segKV, -2)
		add(fmt.Sprintf("activations (prefill of %d tokens)", min(core.MaxUBatch, v.Ctx)), v.Activations, segActivations, -2)
	}
	for i, b := range info.BlockBytes {
		if !v.Plan.OnDevice(i) {
			add(fmt.Sprintf("block %d", i), b, segHost, i)
		}
	}
	if !v.Plan.DeviceHoldsUnblocked() {
		add("output, embeddings, final norm", info.UnblockedBytes, segHost, -1)
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

// hoverText names a segment for the hover line.
func (s barSegment) hoverText() string {
	where := "on the GPU"
	if !s.onDevice() {
		where = "on the CPU"
	}
	return fmt.Sprintf("%s · %s · %s", s.Label, humanBytes(s.Bytes), where)
}

// offloadBar draws a barModel. Hovering a segment reports its name and
// bytes through OnHover.
type offloadBar struct {
	widget.BaseWidget
	model   barModel
	hovered int
	// OnHover receives the hovered segment's text ("" when the mouse leaves).
	OnHover func(string)
}

var _ desktop.Hoverable = (*offloadBar)(nil)

func newOffloadBar() *offloadBar {
	b := &offloadBar{hovered: -1}
	b.ExtendBaseWidget(b)
	return b
}

// SetModel replaces what is drawn.
func (b *offloadBar) SetModel(m barModel) {
	b.model = m
	b.hovered = -1
	b.Refresh()
}

const (
	barHeight   = 22
	markerSpace = 16
)

// segmentAt finds the segment under x (in the widget's coordinates).
func (b *offloadBar) segmentAt(x float32) int {
	w := b.Size().Width
	if w <= 0 || len(b.model.Segs) == 0 {
		return -1
	}
	at := int64(float64(x) / float64(w) * float64(b.model.Scale))
	for i, s := range b.model.Segs {
		if at >= s.Start && at < s.Start+s.Bytes {
			return i
		}
	}
	return -1
}

func (b *offloadBar) hoverAt(p fyne.Position) {
	i := -1
	if p.Y <= barHeight+2 {
		i = b.segmentAt(p.X)
	}
	if i == b.hovered {
		return
	}
	b.hovered = i
	if b.OnHover != nil {
		if i < 0 {
			b.OnHover("")
		} else {
			b.OnHover(b.model.Segs[i].hoverText())
		}
	}
	b.Refresh()
}

func (b *offloadBar) MouseIn(e *desktop.MouseEvent)    { b.hoverAt(e.Position) }
func (b *offloadBar) MouseMoved(e *desktop.MouseEvent) { b.hoverAt(e.Position) }
func (b *offloadBar) MouseOut() {
	b.hovered = -1
	if b.OnHover != nil {
		b.OnHover("")
	}
	b.Refresh()
}

func (b *offloadBar) CreateRenderer() fyne.WidgetRenderer {
	r := &barRenderer{bar: b}
	r.rebuild()
	return r
}

type barRenderer struct {
	bar     *offloadBar
	objects []fyne.CanvasObject
}

func (r *barRenderer) MinSize() fyne.Size {
	return fyne.NewSize(240, barHeight+markerSpace)
}

func (r *barRenderer) Layout(fyne.Size) { r.rebuild() }

func (r *barRenderer) Refresh() {
	r.rebuild()
	canvas.Refresh(r.bar)
}

func (r *barRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *barRenderer) Destroy()                     {}

func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: a}
}

// mix blends a toward b by t (0..1).
func mix(a, b color.Color, t float64) color.Color {
	ar, ag, ab, _ := a.RGBA()
	br, bg, bb, _ := b.RGBA()
	m := func(x, y uint32) uint8 { return uint8((float64(x)*(1-t) + float64(y)*t) / 257) }
	return color.NRGBA{R: m(ar, br), G: m(ag, bg), B: m(ab, bb), A: 0xff}
}

// rebuild draws the bar from scratch: a few dozen rectangles at most for
// real models, so there is nothing to gain from reusing them.
func (r *barRenderer) rebuild() {
	b := r.bar
	m := b.model
	size := b.Size()
	r.objects = r.objects[:0]
	th := b.Theme()
	variant := fyne.CurrentApp().Settings().ThemeVariant()
	col := func(n fyne.ThemeColorName) color.Color { return th.Color(n, variant) }
	track := canvas.NewRectangle(withAlpha(col(theme.ColorNameForeground), 0x18))
	track.Resize(fyne.NewSize(size.Width, barHeight))
	r.objects = append(r.objects, track)
	if size.Width <= 0 || len(m.Segs) == 0 {
		return
	}
	scale := float32(size.Width) / float32(m.Scale)
	x := func(bytes int64) float32 { return float32(bytes) * scale }
	primary := col(theme.ColorNamePrimary)
	// Lighter shades mix toward white, which reads as lighter on both the
	// light and the dark background (alpha would darken on dark).
	fill := map[segKind]color.Color{
		segDevice:      primary,
		segHost:        withAlpha(col(theme.ColorNameForeground), 0x50),
		segKV:          mix(primary, color.White, 0.40),
		segActivations: mix(primary, color.White, 0.62),
	}
	overflow := col(theme.ColorNameError)
	for i, s := range m.Segs {
		x0, x1 := x(s.Start), x(s.Start+s.Bytes)
		if x1-x0 >= 4 {
			x1-- // a hairline gap shows the block boundaries
		}
		if x1 <= x0 {
			continue
		}
		c := fill[s.Kind]
		if i == b.hovered {
			c = withAlpha(c, 0xff)
		}
		rect := canvas.NewRectangle(c)
		rect.Move(fyne.NewPos(x0, 0))
		rect.Resize(fyne.NewSize(x1-x0, barHeight))
		r.objects = append(r.objects, rect)
		// Whatever the device part puts past the budget is red.
		if s.onDevice() && m.Budget > 0 && !m.BudgetOffScale && s.Start+s.Bytes > m.Budget {
			ox := max(x0, x(m.Budget))
			red := canvas.NewRectangle(overflow)
			red.Move(fyne.NewPos(ox, 0))
			red.Resize(fyne.NewSize(x1-ox, barHeight))
			r.objects = append(r.objects, red)
		}
		if i == b.hovered {
			edge := canvas.NewRectangle(color.Transparent)
			edge.StrokeColor = col(theme.ColorNameForeground)
			edge.StrokeWidth = 1.5
			edge.Move(fyne.NewPos(x0, 0))
			edge.Resize(fyne.NewSize(x1-x0, barHeight))
			r.objects = append(r.objects, edge)
		}
	}
	small := th.Size(theme.SizeNameCaptionText)
	if m.Budget > 0 && !m.BudgetOffScale {
		bx := min(x(m.Budget), size.Width-2)
		line := canvas.NewRectangle(col(theme.ColorNameForeground))
		line.Move(fyne.NewPos(bx-1, -3))
		line.Resize(fyne.NewSize(2, barHeight+6))
		r.objects = append(r.objects, line)
		label := canvas.NewText("budget", col(theme.ColorNameForeground))
		label.TextSize = small
		lw := label.MinSize().Width
		label.Move(fyne.NewPos(max(0, min(bx-lw-3, size.Width-lw)), barHeight+1))
		r.objects = append(r.objects, label)
	} else if m.BudgetOffScale {
		label := canvas.NewText(fmt.Sprintf("budget %s is far beyond the right edge", mib(m.Budget)), col(theme.ColorNameForeground))
		label.TextSize = small
		label.Move(fyne.NewPos(size.Width-label.MinSize().Width, barHeight+1))
		r.objects = append(r.objects, label)
	}
	if m.FitAt >= 0 {
		fx := min(x(m.FitAt), size.Width-1)
		tick := canvas.NewRectangle(col(theme.ColorNameSuccess))
		tick.Move(fyne.NewPos(fx-1, barHeight-4))
		tick.Resize(fyne.NewSize(2, 8))
		r.objects = append(r.objects, tick)
		label := canvas.NewText("auto-fit", col(theme.ColorNameSuccess))
		label.TextSize = small
		lw := label.MinSize().Width
		lx := fx - 5
		if lx+lw > size.Width {
			lx = fx - lw + 5
		}
		label.Move(fyne.NewPos(max(0, lx), barHeight+1))
		r.objects = append(r.objects, label)
	}
}
