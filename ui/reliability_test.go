//go:build !nogui

package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/backend/cpu"
	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/coretest"
	"github.com/minfer/minfer/ui/app"
)

// TestDamagedTokenizerInTheWindow: a damaged vocabulary is one file dialog
// naming the damage, and the window keeps what it had; damage llama.cpp
// tolerates loads and chats; an unusable template is one warning under the
// plan and the chat goes on without it.
func TestDamagedTokenizerInTheWindow(t *testing.T) {
	src := stories(t)
	for _, tc := range coretest.DamagedTokenizers() {
		t.Run(tc.Name, func(t *testing.T) {
			path := coretest.Rewrite(t, src, tc.Edit)
			h := newHarness(t, bigGPU, withSampling(app.Sampling{Sampler: chat.GreedySamplerSettings(), MaxTokens: 8}))
			h.drop(path)
			if tc.Problem != "" {
				d := h.dialog("file")
				if n := strings.Count(d.text.Text, tc.Problem); n != 1 {
					t.Errorf("file dialog says %q %d times: %s", tc.Problem, n, d.text.Text)
				}
				if h.v.c.Info() != nil {
					t.Errorf("a damaged file became the open model")
				}
				test.Tap(d.button("OK"))
				return
			}
			if h.v.dlg != nil {
				t.Fatalf("dialog %q: %s", h.v.dlg.kind, h.v.dlg.text.Text)
			}
			warn := strings.Join(h.v.c.Warnings(), "\n")
			if tc.Template != "" && (strings.Count(warn, tc.Template) != 1 || !h.v.warnings.Visible()) {
				t.Errorf("warnings %q (shown %v), want one saying %q", warn, h.v.warnings.Visible(), tc.Template)
			}
			h.load()
			if last := sendAndWait(h, "Once upon a time"); last.Content == "" || strings.HasPrefix(last.Note, "Error") {
				t.Errorf("reply %+v", last)
			}
		})
	}
}

// TestModelFileChangedUnderTheWindow: truncating the loaded model's file
// and sending a message unloads the model with one dialog offering Reload;
// the conversation stays. Reload of the still-truncated file is the file
// dialog; once the file is whole again, Reload loads it and chat goes on.
func TestModelFileChangedUnderTheWindow(t *testing.T) {
	orig, err := os.ReadFile(stories(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "stories260K.gguf")
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, bigGPU, withSampling(app.Sampling{Sampler: chat.GreedySamplerSettings(), MaxTokens: 8}))
	h.drop(path)
	h.load()
	sendAndWait(h, "Once upon a time")
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	last := sendAndWait(h, "The end")
	d := h.dialog("changed")
	mustContain(t, "dialog", d.text.Text, "changed on disk", "4096 bytes", "Reload")
	mustContain(t, "note", last.Note, "Error")
	if h.v.c.Phase() != app.PhasePlanned || h.v.c.Loaded() != nil {
		t.Errorf("phase %v after the change, want planned and unloaded", h.v.c.Phase())
	}
	if n := len(h.v.c.Chat().Messages); n != 4 {
		t.Errorf("%d messages kept, want 4", n)
	}
	test.Tap(d.button("Reload"))
	mustContain(t, "file dialog", h.dialog("file").text.Text, "cannot fit")
	test.Tap(h.v.dlg.button("OK"))

	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	h.v.c.Reload(path)
	h.waitFor("the reload", func() bool { return h.v.c.Phase() != app.PhaseLoading })
	if h.v.c.Phase() != app.PhaseReady {
		t.Fatalf("phase %v after Reload", h.v.c.Phase())
	}
	if last := sendAndWait(h, "Once upon a time"); last.Content == "" || last.Note != "" && strings.HasPrefix(last.Note, "Error") {
		t.Errorf("reply after the reload: %+v", last)
	}
}

// flakyDevice is a CPU backend standing in for a device whose compute
// fails once, at the n-th call.
type flakyDevice struct {
	*cpu.CPU
	failAt int64
	calls  atomic.Int64
}

func (f *flakyDevice) Compute(ctx context.Context, nodes []*graph.Node) error {
	if f.calls.Add(1) == f.failAt {
		return errors.New("CUDA_ERROR_LAUNCH_FAILED")
	}
	return f.CPU.Compute(ctx, nodes)
}

func (f *flakyDevice) RegisterWeight(name string, t gguf.GGMLType, dims []int64, data []byte) error {
	if f.failAt < 0 {
		return errors.New("CUDA_ERROR_OUT_OF_MEMORY")
	}
	return f.CPU.RegisterWeight(name, t, dims, data)
}

// TestDeviceFaultsInTheWindow: a device that fails while the weights load
// is the load dialog naming its error, and the next load (the device
// working) succeeds; a device that fails in the middle of a reply ends that
// reply with a note, keeps the conversation, and the next message gets a
// full reply.
func TestDeviceFaultsInTheWindow(t *testing.T) {
	var loads atomic.Int64
	withFlaky := func(c *app.Config) {
		c.Load = func(ctx context.Context, path string, o core.LoadOptions, p core.Progress) (*core.Session, error) {
			dev := &flakyDevice{CPU: cpu.NewNamed("FLAKY", 1), failAt: 3}
			if loads.Add(1) == 1 {
				dev.failAt = -1 // the first load fails registering
			}
			o.DeviceBackend = dev
			return core.Load(ctx, path, o, p)
		}
	}
	h := newHarness(t, bigGPU, withSampling(app.Sampling{Sampler: chat.GreedySamplerSettings(), MaxTokens: 8}), withFlaky)
	h.drop(stories(t))
	test.Tap(h.v.loadBtn)
	h.waitFor("the load", func() bool { return h.v.c.Phase() != app.PhaseLoading })
	d := h.dialog("load")
	mustContain(t, "load dialog", d.text.Text, "FLAKY", "CUDA_ERROR_OUT_OF_MEMORY")
	if h.v.c.Phase() != app.PhasePlanned {
		t.Errorf("phase %v after a failed load", h.v.c.Phase())
	}
	test.Tap(d.button("OK"))
	h.load()
	if r := h.v.c.Loaded().Report; r.Backend != "FLAKY" {
		t.Errorf("report %+v: the blocks are not on the device", r)
	}
	last := sendAndWait(h, "Once upon a time")
	mustContain(t, "note", last.Note, "Error: the reply ended early", "FLAKY", "CUDA_ERROR_LAUNCH_FAILED")
	if h.v.c.Phase() != app.PhaseReady {
		t.Errorf("phase %v after a failed step", h.v.c.Phase())
	}
	next := sendAndWait(h, "Once upon a time")
	if next.Content == "" || strings.HasPrefix(next.Note, "Error") {
		t.Errorf("the reply after the fault: %+v", next)
	}
}
