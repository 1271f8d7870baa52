//go:build !nogui

package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// chatInput is an Entry where Enter sends and Shift+Enter starts a new
// line, Esc stops generation, and the window's shortcuts (Ctrl+O, Ctrl+N,
// Ctrl+L) keep working while it has the focus (a focused Entry would
// otherwise swallow them).
type chatInput struct {
	widget.Entry
	shift bool

	onSend     func()
	onEscape   func()
	onShortcut func(fyne.Shortcut) bool
}

func newChatInput(multiLine bool) *chatInput {
	e := &chatInput{}
	e.MultiLine = multiLine
	if multiLine {
		e.Wrapping = fyne.TextWrapWord
	}
	e.ExtendBaseWidget(e)
	return e
}

func isShift(k fyne.KeyName) bool {
	return k == desktop.KeyShiftLeft || k == desktop.KeyShiftRight
}

// KeyDown tracks Shift: the driver delivers Shift+Enter as a plain Return
// key, so the modifier has to be remembered here.
func (e *chatInput) KeyDown(k *fyne.KeyEvent) {
	if isShift(k.Name) {
		e.shift = true
	}
	e.Entry.KeyDown(k)
}

func (e *chatInput) KeyUp(k *fyne.KeyEvent) {
	if isShift(k.Name) {
		e.shift = false
	}
	e.Entry.KeyUp(k)
}

func (e *chatInput) FocusLost() {
	e.shift = false
	e.Entry.FocusLost()
}

func (e *chatInput) TypedKey(k *fyne.KeyEvent) {
	switch k.Name {
	case fyne.KeyReturn, fyne.KeyEnter:
		if !e.shift && e.onSend != nil {
			e.onSend()
			return
		}
		if !e.MultiLine {
			return
		}
	case fyne.KeyEscape:
		if e.onEscape != nil {
			e.onEscape()
			return
		}
	}
	e.Entry.TypedKey(k)
}

func (e *chatInput) TypedShortcut(s fyne.Shortcut) {
	if e.onShortcut != nil && e.onShortcut(s) {
		return
	}
	e.Entry.TypedShortcut(s)
}
