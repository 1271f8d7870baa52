//go:build !nogui

package ui

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	sqdialog "github.com/sqweek/dialog"

	"github.com/minfer/minfer/ui/app"
)

// nativeMu: one native dialog at a time (GTK is not re-entrant).
var nativeMu sync.Mutex

// hasDisplay: GTK's dialog needs an X or Wayland display on Linux; without
// one its init fails and the dialog would panic.
func hasDisplay() bool {
	if runtime.GOOS != "linux" && runtime.GOOS != "freebsd" {
		return true
	}
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

// errNativeUnavailable says the native dialog could not run; the caller
// falls back to Fyne's own.
var errNativeUnavailable = errors.New("native file dialog unavailable")

// nativeOpen runs the platform's file dialog. It blocks, so it is called
// off the UI goroutine; a panic inside it (no display, GTK init failed)
// becomes errNativeUnavailable.
func nativeOpen() (path string, err error) {
	nativeMu.Lock()
	defer nativeMu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			path, err = "", fmt.Errorf("%w: %v", errNativeUnavailable, r)
		}
	}()
	return sqdialog.File().Title("Open a GGUF model").Filter("GGUF models", "gguf").Filter("All files", "*").Load()
}

// pickFile shows a file dialog and opens what the user picks.
func (v *view) pickFile() {
	if v.noNativeDialog || !hasDisplay() {
		v.fyneOpen()
		return
	}
	go func() {
		path, err := nativeOpen()
		v.post(func() {
			switch {
			case err == nil:
				v.c.OpenFile(path)
			case errors.Is(err, sqdialog.ErrCancelled):
			default:
				v.noNativeDialog = true // do not try again this session
				v.fyneOpen()
			}
		})
	}()
}

// fyneOpen is the fallback: Fyne's own file dialog.
func (v *view) fyneOpen() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			v.showProblem(app.FileProblem{Path: "(file dialog)", Err: err})
			return
		}
		if r == nil {
			return // cancelled
		}
		path := r.URI().Path()
		r.Close()
		v.c.OpenFile(path)
	}, v.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".gguf", ".GGUF"}))
	d.Resize(fyne.NewSize(800, 560))
	d.Show()
}
