//go:build !nogui

package ui

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/coretest"
	"github.com/minfer/minfer/ui/app"
)

// labelsIn collects the text of every label under o.
func labelsIn(o fyne.CanvasObject) string {
	var b strings.Builder
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Label:
			b.WriteString(w.Text + "\n")
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		}
	}
	walk(o)
	return b.String()
}

// A conversation holding a tool round trip (an assistant turn that calls
// get_weather, the tool's result, the answer) shows the call as a
// collapsible item with its arguments and the result beside them, and the
// result turn as a collapsible result. Continuing it with a model whose own
// template cannot render a content-less tool-call turn (chatml, as Python
// jinja2 also fails) brings up "This model's chat template …" with the
// built-in template offered; accepting it gives the reply, and the calls
// survive the save.
func TestToolRoundTripInConversation(t *testing.T) {
	call := chat.ToolCall{ID: "a1b2c3d4e", Type: "function", Function: chat.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`}}
	now := time.Now()
	saved := &app.Chat{ID: app.NewChatID(now), Title: "Weather", Created: now, Updated: now, Messages: []app.ChatMessage{
		{Role: "user", Content: "Weather in Paris?"},
		{Role: "assistant", ToolCalls: []chat.ToolCall{call}},
		{Role: "tool", ToolCallID: call.ID, Name: "get_weather", Content: `{"temperature": 21, "sky": "clear"}`},
		{Role: "assistant", Content: "It is 21 °C and clear."},
	}}
	var chatsDir string
	h := newHarness(t, bigGPU, withSampling(app.Sampling{Sampler: chat.SamplerSettings{Temperature: 0, Seed: 1}, MaxTokens: 8}),
		func(c *app.Config) {
			chatsDir = filepath.Join(c.ConfigDir, "chats")
			store, err := app.NewChatStore(chatsDir)
			if err == nil {
				err = store.Save(saved)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	v := h.v
	v.c.OpenChat(saved.ID)
	h.pump()

	if len(v.msgViews) != 4 {
		t.Fatalf("%d message views, want 4", len(v.msgViews))
	}
	callView := v.msgViews[1]
	if callView.calls == nil || len(callView.calls.Items) != 1 {
		t.Fatalf("the tool call is not shown as a call")
	}
	item := callView.calls.Items[0]
	mustContain(t, "call title", item.Title, "get_weather", `"city":"Paris"`)
	if item.Open {
		t.Error("the call starts expanded; want it collapsed")
	}
	callView.calls.Open(0)
	detail := labelsIn(item.Detail.(*fyne.Container))
	mustContain(t, "call detail", detail, "arguments", `"city": "Paris"`, `"unit": "celsius"`, "result", `"temperature": 21`)
	resultView := v.msgViews[2]
	if resultView.result == nil || resultView.who.Text != "tool" {
		t.Fatalf("the tool result is not shown as one")
	}
	mustContain(t, "result title", resultView.result.Items[0].Title, "Result of get_weather")
	mustContain(t, "result", resultView.result.Items[0].Detail.(*widget.Label).Text, `"sky": "clear"`)
	if v.msgViews[0].calls != nil || v.msgViews[3].calls != nil || v.msgViews[3].result != nil {
		t.Error("plain turns show tool widgets")
	}

	// Continue the conversation with a model.
	h.drop(coretest.WithChatML(t, stories(t)))
	h.load()
	failed := sendAndWait(h, "And tomorrow?")
	mustContain(t, "note", failed.Note, "this model's chat template cannot render this conversation", "UndefinedError")
	d := h.dialog("template")
	mustContain(t, "dialog", d.text.Text, "This model's chat template cannot render this conversation", "built-in chatml template")
	btn := d.button("Use the built-in chatml template")
	if btn == nil {
		t.Fatal("no button offers the built-in template")
	}
	test.Tap(btn)
	h.waitFor("the reply with the built-in template", func() bool { return !v.c.Generating() })
	msgs := v.c.Chat().Messages
	last := msgs[len(msgs)-1]
	if len(msgs) != 6 || last.Role != "assistant" || strings.TrimSpace(last.Content) == "" || last.Note != "" && !strings.Contains(last.Note, "limit") {
		t.Fatalf("after the fallback: %d messages, last %+v", len(msgs), last)
	}
	if src := v.c.Loaded().Source; src.Kind != chat.SourceBuiltin || src.Family != chat.FamilyChatML {
		t.Errorf("loaded template source %v", src)
	}

	// Saved and read back with the calls.
	store, err := app.NewChatStore(chatsDir)
	if err != nil {
		t.Fatal(err)
	}
	saved, err = store.Load(v.c.Chat().ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := saved.Messages[1]; len(got.ToolCalls) != 1 || got.ToolCalls[0] != call || saved.Messages[2].ToolCallID != call.ID || saved.Messages[2].Name != "get_weather" {
		t.Errorf("saved tool turns: %+v / %+v", got, saved.Messages[2])
	}
}

// A model whose template recurses without end (issue #15's hostile
// template) loads with the built-in template of its family; the details
// say "this model's chat template cannot be used" and why, and the chat
// works.
func TestHostileTemplateFallsBackAtLoad(t *testing.T) {
	h := newHarness(t, bigGPU, withSampling(app.Sampling{Sampler: chat.SamplerSettings{Temperature: 0, Seed: 1}, MaxTokens: 6}))
	hostile := `{% macro f(n) %}{{ f(n+1) }}{% endmacro %}{{ f(0) }}<|im_start|>`
	model := coretest.Rewrite(t, stories(t), func(_ *gguf.File, b *gguf.Builder) error {
		return b.Set("tokenizer.chat_template", gguf.Value{Type: gguf.ValString, V: hostile})
	})
	h.drop(model)
	h.load()
	src := h.v.c.Loaded().Source
	if src.Kind != chat.SourceBuiltin || src.Family != chat.FamilyChatML {
		t.Fatalf("template source %v, want the built-in chatml", src)
	}
	mustContain(t, "details", h.v.c.ReportText(), "built-in chatml template", "this model's chat template cannot be used", "recursion depth")
	if reply := sendAndWait(h, "Hello"); strings.TrimSpace(reply.Content) == "" || strings.HasPrefix(reply.Note, "Error") {
		t.Errorf("reply %+v", reply)
	}
}
