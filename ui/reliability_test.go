//go:build !nogui

package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/minfer/minfer/core/chat"
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
