//go:build !nogui

// Package ui is Minfer's window (Fyne): thin widgets over a Controller
// that holds the state, and one worker goroutine that owns the model.
package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"github.com/minfer/minfer/assets"
	"github.com/minfer/minfer/ui/app"
)

// Run opens the window and blocks until it closes. args is what followed
// `minfer gui`: at most one model file, opened at start.
func Run(args []string) error {
	var file string
	switch {
	case len(args) > 1:
		return fmt.Errorf("gui: want at most one model file, got %d arguments: %s", len(args), strings.Join(args, " "))
	case len(args) == 1 && strings.HasPrefix(args[0], "-"):
		return fmt.Errorf("gui: unknown flag %q (usage: minfer gui [FILE.gguf])", args[0])
	case len(args) == 1:
		file = args[0]
	}
	a := fyneapp.NewWithID("io.minfer.app")
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.Icon))
	w := a.NewWindow("Minfer")
	v, err := newView(a, w, app.Config{Post: fyne.Do, Prefs: a.Preferences()})
	if err != nil {
		return err
	}
	w.SetOnClosed(v.c.Close)
	w.Resize(fyne.NewSize(1120, 780))
	if file != "" {
		// Once the window is up, so a problem dialog has somewhere to go.
		a.Lifecycle().SetOnStarted(func() { v.c.OpenFile(file) })
	}
	w.ShowAndRun()
	return nil
}
