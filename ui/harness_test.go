//go:build !nogui

package ui

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/internal/ggtest"
	"github.com/minfer/minfer/ui/app"
)

// harness runs the window headless. Everything the worker posts is queued
// and run on the test goroutine by pump(), exactly as fyne.Do runs it on
// the UI goroutine in the app, so the controller stays single-threaded.
type harness struct {
	t   *testing.T
	app fyne.App
	win fyne.Window
	v   *view
	// configDir is the controller's config folder (a temporary one).
	configDir string
	mu        sync.Mutex
	queue     []func()
	// streamed counts refreshes that showed a partial reply.
	streamed []string
}

func fakeDevice(t *testing.T, spec string) func() devices.DeviceMemory {
	t.Helper()
	dm, err := devices.ParseFakeDevice(spec)
	if err != nil {
		t.Fatal(err)
	}
	return func() devices.DeviceMemory { return dm }
}

func noEnv(string) (string, bool) { return "", false }

func newHarness(t *testing.T, device string, tweak ...func(*app.Config)) *harness {
	t.Helper()
	h := &harness{t: t}
	h.app = test.NewTempApp(t)
	h.win = h.app.NewWindow("Minfer")
	h.win.Resize(fyne.NewSize(1120, 780))
	cfg := app.Config{
		ConfigDir: t.TempDir(),
		Device:    fakeDevice(t, device),
		Env:       noEnv,
		Post:      h.post,
		Prefs:     h.app.Preferences(),
		Threads:   1,
		Interval:  5 * time.Millisecond,
	}
	for _, f := range tweak {
		f(&cfg)
	}
	h.configDir = cfg.ConfigDir
	v, err := newView(h.app, h.win, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.v = v
	prev := v.c.OnChange
	v.c.OnChange = func(ch app.Change) {
		prev(ch)
		if ch&app.ChangeStream != 0 && len(v.msgViews) > 0 {
			h.streamed = append(h.streamed, v.msgViews[len(v.msgViews)-1].bodyText())
		}
	}
	h.win.Show()
	t.Cleanup(func() {
		done := make(chan struct{})
		go func() { v.c.Close(); close(done) }()
		for {
			select {
			case <-done:
				h.pump()
				h.win.Close()
				return
			case <-time.After(5 * time.Millisecond):
				h.pump()
			}
		}
	})
	return h
}

func (h *harness) post(f func()) {
	h.mu.Lock()
	h.queue = append(h.queue, f)
	h.mu.Unlock()
}

// pump runs what the worker posted so far.
func (h *harness) pump() {
	for {
		h.mu.Lock()
		q := h.queue
		h.queue = nil
		h.mu.Unlock()
		if len(q) == 0 {
			return
		}
		for _, f := range q {
			f()
		}
	}
}

// waitFor pumps until cond holds; the bound keeps a broken worker from
// hanging the test run.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		h.pump()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (h *harness) drop(path string) {
	h.v.handleDrop([]fyne.URI{storage.NewFileURI(path)})
}

func (h *harness) load() {
	h.t.Helper()
	if h.v.loadBtn.Disabled() {
		h.t.Fatalf("Load is disabled (phase %v)", h.v.c.Phase())
	}
	test.Tap(h.v.loadBtn)
	h.waitFor("the load", func() bool { return h.v.c.Phase() != app.PhaseLoading })
	if h.v.c.Phase() != app.PhaseReady {
		msg := ""
		if h.v.dlg != nil {
			msg = h.v.dlg.text.Text
		}
		h.t.Fatalf("load ended in phase %v; dialog: %s", h.v.c.Phase(), msg)
	}
}

// dialog asserts the dialog on screen is of kind and returns it.
func (h *harness) dialog(kind string) *shownDialog {
	h.t.Helper()
	if h.v.dlg == nil {
		h.t.Fatalf("no dialog shown, want %q", kind)
	}
	if h.v.dlg.kind != kind {
		h.t.Fatalf("dialog %q (%s) shown, want %q", h.v.dlg.kind, h.v.dlg.text.Text, kind)
	}
	return h.v.dlg
}

func stories(t *testing.T) string { return ggtest.Path(t, "models", "stories260K.gguf") }

// corruptCopy writes the first n bytes of a model: a truncated file.
func corruptCopy(t *testing.T, n int) string {
	t.Helper()
	b, err := os.ReadFile(stories(t))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "truncated.gguf")
	if err := os.WriteFile(p, b[:n], 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s = %q, want it to contain %q", what, got, w)
		}
	}
}
