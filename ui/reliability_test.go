//go:build !nogui

package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/coretest"
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
			h := newHarness(t, bigGPU, withSampling(Sampling{Sampler: chat.GreedySamplerSettings(), MaxTokens: 8}))
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
	h := newHarness(t, bigGPU, withSampling(Sampling{Sampler: chat.GreedySamplerSettings(), MaxTokens: 8}))
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
	if h.v.c.Phase() != PhasePlanned || h.v.c.Loaded() != nil {
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
	h.waitFor("the reload", func() bool { return h.v.c.Phase() != PhaseLoading })
	if h.v.c.Phase() != PhaseReady {
		t.Fatalf("phase %v after Reload", h.v.c.Phase())
	}
	if last := sendAndWait(h, "Once upon a time"); last.Content == "" || last.Note != "" && strings.HasPrefix(last.Note, "Error") {
		t.Errorf("reply after the reload: %+v", last)
	}
}
