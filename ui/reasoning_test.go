//go:build !nogui

package ui

import (
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/minfer/minfer/ui/app"
)

// A reasoning model's think block is shown collapsed above the answer,
// titled "Thinking…" while it streams; the answer never shows it.
func TestReplyShowsReasoningCollapsed(t *testing.T) {
	test.NewTempApp(t)
	mv := newMessageView(app.ChatMessage{Role: "assistant", Content: ""}, nil)
	if mv.think.Visible() {
		t.Fatal("an empty reply shows a reasoning item")
	}
	mv.setContent("<think>\nThe user asks for")
	if !mv.think.Visible() || mv.thinkItem.Title != "Thinking…" || mv.bodyText() != "" {
		t.Fatalf("while thinking: visible %v, title %q, answer %q", mv.think.Visible(), mv.thinkItem.Title, mv.bodyText())
	}
	mv.setContent("<think>\nThe user asks for a greeting.\n</think>\n\nHello there")
	if mv.thinkItem.Title != "Reasoning (6 words)" || mv.thinkText.Text != "The user asks for a greeting." {
		t.Fatalf("after thinking: title %q, reasoning %q", mv.thinkItem.Title, mv.thinkText.Text)
	}
	if mv.thinkItem.Open {
		t.Fatal("the reasoning opens by itself; it should stay collapsed")
	}
	if got := mv.bodyText(); got != "Hello there" {
		t.Fatalf("answer %q", got)
	}
	plain := newMessageView(app.ChatMessage{Role: "assistant", Content: "Just an answer."}, nil)
	if plain.think.Visible() || plain.bodyText() != "Just an answer." {
		t.Fatalf("a reply without a block: reasoning visible %v, answer %q", plain.think.Visible(), plain.bodyText())
	}
}
