//go:build !nogui

// Package ui is Minfer's window (Fyne).
package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/widget"
)

// Run opens the window and blocks until it closes.
func Run(args []string) error {
	a := app.NewWithID("io.minfer.app")
	w := a.NewWindow("Minfer")
	w.SetContent(widget.NewLabel("Drop a .gguf file here"))
	w.Resize(fyne.NewSize(900, 600))
	w.ShowAndRun()
	return nil
}
