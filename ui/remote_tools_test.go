//go:build !nogui

package ui

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine"
	"github.com/minfer/minfer/internal/server"
	"github.com/minfer/minfer/ui/app"
)

// callingEngine is a model behind `minfer serve` that answers with text
// and a tool call, and records the conversation it was given.
type callingEngine struct {
	msgs []chat.Message
	call chat.ToolCall
}

func (e *callingEngine) ReplyMessage(_ context.Context, msgs []chat.Message, _ chat.GenOptions, emit func(chat.Event)) (chat.Message, chat.Stats, error) {
	e.msgs = msgs
	if emit != nil {
		emit(chat.Event{Text: "Checking the "})
		emit(chat.Event{Text: "forecast."})
	}
	return chat.Message{Role: "assistant", Content: "Checking the forecast.", ToolCalls: []chat.ToolCall{e.call}},
		chat.Stats{PromptTokens: 30, Generated: 20, StopReason: chat.StopToolCalls}, nil
}

func (e *callingEngine) Reply(ctx context.Context, msgs []chat.Message, opts chat.GenOptions, emit func(chat.Event)) (string, chat.Stats, error) {
	m, st, err := e.ReplyMessage(ctx, msgs, opts, emit)
	return m.Content, st, err
}
func (e *callingEngine) Complete(context.Context, string, chat.GenOptions, func(chat.Event)) (string, chat.Stats, error) {
	return "", chat.Stats{}, errors.New("not used")
}
func (e *callingEngine) Templated() bool { return true }
func (e *callingEngine) Reset() error    { return nil }
func (e *callingEngine) Where() string   { return "test" }

// A conversation holding a tool round trip, continued through a server:
// the earlier call and its result reach the server as a tool-call turn and
// a tool turn, and the server's reply, which calls a tool, is shown as a
// call (collapsible, with its arguments) as a local model's is, and saved
// with it.
func TestWindowRemoteToolCalls(t *testing.T) {
	eng := &callingEngine{call: chat.ToolCall{ID: "call_tmrw", Type: "function",
		Function: chat.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris","day":"tomorrow"}`}}}
	srv := server.New(server.Model{ID: "m", Ctx: 512,
		Exec: func(_ context.Context, fn func(engine.Engine)) error { fn(eng); return nil }}, server.Config{})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Shutdown(context.Background()) })

	call := chat.ToolCall{ID: "a1b2c3d4e", Type: "function", Function: chat.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}
	now := time.Now()
	saved := &app.Chat{ID: app.NewChatID(now), Title: "Weather", Created: now, Updated: now, Messages: []app.ChatMessage{
		{Role: "user", Content: "Weather in Paris?"},
		{Role: "assistant", ToolCalls: []chat.ToolCall{call}},
		{Role: "tool", ToolCallID: call.ID, Name: "get_weather", Content: `{"temperature": 21}`},
		{Role: "assistant", Content: "It is 21 °C."},
	}}
	var chatsDir string
	h := newHarness(t, bigGPU, greedyUI(16), func(c *app.Config) {
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
	connect(h, ts.URL, "")
	if v.c.Remote() == nil {
		t.Fatal("not connected")
	}
	v.c.OpenChat(saved.ID)
	h.pump()
	reply := sendAndWait(h, "And tomorrow?")

	// What the server's model was given.
	if len(eng.msgs) != 5 {
		t.Fatalf("the server's model got %d messages: %+v", len(eng.msgs), eng.msgs)
	}
	if m := eng.msgs[1]; m.Role != "assistant" || m.Content != "" || len(m.ToolCalls) != 1 || m.ToolCalls[0] != call {
		t.Errorf("tool-call turn sent as %+v", m)
	}
	if m := eng.msgs[2]; m.Role != "tool" || m.ToolCallID != call.ID || m.Name != "get_weather" || m.Content != `{"temperature": 21}` {
		t.Errorf("tool turn sent as %+v", m)
	}
	if m := eng.msgs[4]; m.Role != "user" || m.Content != "And tomorrow?" {
		t.Errorf("last turn sent as %+v", m)
	}

	// The reply and how it is shown.
	if reply.Content != "Checking the forecast." || len(reply.ToolCalls) != 1 || reply.ToolCalls[0] != eng.call || reply.Note != "" {
		t.Fatalf("reply %+v", reply)
	}
	if reply.Stats == nil || reply.Stats.StopReason != chat.StopToolCalls {
		t.Errorf("reply stats %+v", reply.Stats)
	}
	last := v.msgViews[len(v.msgViews)-1]
	if last.calls == nil || len(last.calls.Items) != 1 {
		t.Fatal("the server's tool call is not shown as a call")
	}
	item := last.calls.Items[0]
	mustContain(t, "call title", item.Title, "get_weather", `"day":"tomorrow"`)
	if item.Open {
		t.Error("the call starts expanded; want it collapsed")
	}
	mustContain(t, "reply", v.c.Chat().Messages[len(v.c.Chat().Messages)-1].Content, "Checking the forecast.")
	if earlier := v.msgViews[1]; earlier.calls == nil || len(earlier.calls.Items) != 1 {
		t.Error("the earlier call is no longer shown as one")
	}

	// Saved with the call.
	store, err := app.NewChatStore(chatsDir)
	if err != nil {
		t.Fatal(err)
	}
	back, err := store.Load(v.c.Chat().ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Messages[len(back.Messages)-1]; len(got.ToolCalls) != 1 || got.ToolCalls[0] != eng.call {
		t.Errorf("saved reply %+v", got)
	}
}
