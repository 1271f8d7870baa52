//go:build !nogui

// Package widget holds Minfer's own Fyne widgets: the offload bar, which
// draws the plain-Go layout app.OffloadBarModel computes.
package widget

import (
	"fmt"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/minfer/minfer/ui/app"
)

// OffloadBar draws an app.BarModel. Hovering a segment reports its name and
// bytes through OnHover.
type OffloadBar struct {
	widget.BaseWidget
	model   app.BarModel
	hovered int
	// OnHover receives the hovered segment's text ("" when the mouse leaves).
	OnHover func(string)
}

var _ desktop.Hoverable = (*OffloadBar)(nil)

// NewOffloadBar returns an empty bar; SetModel gives it something to draw.
func NewOffloadBar() *OffloadBar {
	b := &OffloadBar{hovered: -1}
	b.ExtendBaseWidget(b)
	return b
}

// SetModel replaces what is drawn.
func (b *OffloadBar) SetModel(m app.BarModel) {
	b.model = m
	b.hovered = -1
	b.Refresh()
}

// Model is what the bar draws now.
func (b *OffloadBar) Model() app.BarModel { return b.model }

const (
	barHeight   = 22
	markerSpace = 16
)

// segmentAt finds the segment under x (in the widget's coordinates).
func (b *OffloadBar) segmentAt(x float32) int {
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

func (b *OffloadBar) hoverAt(p fyne.Position) {
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
			b.OnHover(b.model.Segs[i].HoverText())
		}
	}
	b.Refresh()
}

func (b *OffloadBar) MouseIn(e *desktop.MouseEvent)    { b.hoverAt(e.Position) }
func (b *OffloadBar) MouseMoved(e *desktop.MouseEvent) { b.hoverAt(e.Position) }
func (b *OffloadBar) MouseOut() {
	b.hovered = -1
	if b.OnHover != nil {
		b.OnHover("")
	}
	b.Refresh()
}

func (b *OffloadBar) CreateRenderer() fyne.WidgetRenderer {
	r := &barRenderer{bar: b}
	r.rebuild()
	return r
}

type barRenderer struct {
	bar     *OffloadBar
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
	fill := map[app.SegKind]color.Color{
		app.SegDevice:      primary,
		app.SegHost:        withAlpha(col(theme.ColorNameForeground), 0x50),
		app.SegKV:          mix(primary, color.White, 0.40),
		app.SegActivations: mix(primary, color.White, 0.62),
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
		if s.OnDevice() && m.Budget > 0 && !m.BudgetOffScale && s.Start+s.Bytes > m.Budget {
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
		label := canvas.NewText(fmt.Sprintf("budget %s is far beyond the right edge", app.MiB(m.Budget)), col(theme.ColorNameForeground))
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
