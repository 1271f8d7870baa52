// Package enginetest holds test helpers shared by the engine's and the
// server's tests.
package enginetest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/internal/engine"
	"github.com/minfer/minfer/internal/ggtest"
)

// ToolEngine answers every request with a fixed reply written in a model's
// tool-call format, streamed in small pieces and parsed the way a local
// engine parses it (chat.ToolStream), and records what it was asked. It
// stands for a model that calls tools.
type ToolEngine struct {
	Script string          // the reply
	Format chat.ToolFormat // the format Script is parsed in when the request has tools
	// Answer, when set, writes the reply to a conversation whose last turn
	// is a tool result (the second leg of a round trip).
	Answer func(msgs []chat.Message) string
	Err    error // returned instead of a reply when set

	Msgs []chat.Message  // the last request's messages
	Opts chat.GenOptions // and its options
}

var _ engine.Engine = (*ToolEngine)(nil)

func (f *ToolEngine) ReplyMessage(_ context.Context, msgs []chat.Message, opts chat.GenOptions, emit func(chat.Event)) (chat.Message, chat.Stats, error) {
	f.Msgs, f.Opts = msgs, opts
	if f.Err != nil {
		return chat.Message{}, chat.Stats{}, f.Err
	}
	format := chat.ToolFormatNone
	if opts.Tools != nil {
		format = f.Format
	}
	reply := f.Script
	if f.Answer != nil && len(msgs) > 0 && msgs[len(msgs)-1].Role == "tool" {
		reply = f.Answer(msgs)
	}
	s := chat.NewToolStream(format)
	for i := 0; i < len(reply); i += 5 {
		if t := s.Push(reply[i:min(i+5, len(reply))]); t != "" && emit != nil {
			emit(chat.Event{Text: t})
		}
	}
	res := s.Finish()
	if res.Tail != "" && emit != nil {
		emit(chat.Event{Text: res.Tail})
	}
	st := chat.Stats{PromptTokens: 12, Generated: 7, StopReason: chat.StopEOG}
	msg := chat.Message{Role: "assistant", Content: res.Content, ToolCalls: res.Calls}
	if len(res.Calls) > 0 {
		st.StopReason = chat.StopToolCalls
		msg.Content = strings.TrimSpace(res.Content)
	}
	return msg, st, nil
}

func (f *ToolEngine) Reply(ctx context.Context, msgs []chat.Message, opts chat.GenOptions, emit func(chat.Event)) (string, chat.Stats, error) {
	m, st, err := f.ReplyMessage(ctx, msgs, opts, emit)
	return m.Content, st, err
}

func (f *ToolEngine) Complete(context.Context, string, chat.GenOptions, func(chat.Event)) (string, chat.Stats, error) {
	return "", chat.Stats{}, errors.New("not used")
}
func (f *ToolEngine) Templated() bool { return true }
func (f *ToolEngine) Reset() error    { return nil }
func (f *ToolEngine) Where() string   { return "test" }

// LoadStories loads the test model stories260K on the CPU (one thread, a
// 256-token context, no device, no environment) as a local engine, closed
// when the test ends.
func LoadStories(t testing.TB) *engine.Local {
	t.Helper()
	o := core.LoadOptions{Threads: 1, PlanOptions: core.PlanOptions{Ctx: 256,
		Device: func() devices.DeviceMemory { return devices.NoDevice{Reason: "test"} },
		Env:    func(string) (string, bool) { return "", false }}}
	s, err := core.Load(context.Background(), ggtest.Path(t, "models", "stories260K.gguf"), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	l, err := engine.NewLocal(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// CutStreamServer is an OpenAI-compatible server that lists one model "m"
// and dies in the middle of every chat reply: it streams the chunk "Half a
// sto", then drops the connection without [DONE]. Closed when the test ends.
func CutStreamServer(t testing.TB) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","created":0,"owned_by":"x"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Half a sto\"},\"finish_reason\":null}]}\n\n")
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond)
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}
