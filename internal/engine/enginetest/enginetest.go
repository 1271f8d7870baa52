// Package enginetest holds test helpers shared by the engine's and the
// server's tests.
package enginetest

import (
	"context"
	"errors"
	"strings"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine"
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
