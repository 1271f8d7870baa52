// Package engine is what a chat front end (the window, `minfer chat`, the
// API server) talks to: a model loaded on this computer, or a model served
// by an OpenAI-compatible server elsewhere. Front ends hold an Engine and
// never branch on which kind it is.
package engine

import (
	"context"
	"errors"

	"github.com/minfer/minfer/core/chat"
)

// Engine generates text for chats and raw prompts. An Engine is used by
// one goroutine at a time.
type Engine interface {
	// Reply answers msgs, streaming pieces of text to emit (which may be
	// nil). Cancelling ctx stops within one token: the text so far is
	// returned with Stats.StopReason chat.StopCancelled and a nil error.
	// An engine without a chat template joins the messages' contents and
	// continues that text.
	Reply(ctx context.Context, msgs []chat.Message, opts chat.GenOptions, emit func(chat.Event)) (string, chat.Stats, error)
	// ReplyMessage is Reply for conversations with tools (opts.Tools, a
	// JSON array; messages may carry tool calls and tool results): the
	// reply comes back as an assistant message whose ToolCalls hold the
	// calls the model made (Stats.StopReason chat.StopToolCalls), and emit
	// sees only text that is not part of a call.
	ReplyMessage(ctx context.Context, msgs []chat.Message, opts chat.GenOptions, emit func(chat.Event)) (chat.Message, chat.Stats, error)
	// Complete continues raw text (no chat template).
	Complete(ctx context.Context, prompt string, opts chat.GenOptions, emit func(chat.Event)) (string, chat.Stats, error)
	// Templated says whether Reply renders a chat template (a remote
	// server always does, as far as the client can tell).
	Templated() bool
	// Reset forgets any cached conversation state (a new chat).
	Reset() error
	// Where says where generation runs, for a person: "this computer" and
	// the plan, or the server's address and model.
	Where() string
}

// ErrToolsUnsupported: the engine cannot pass tools or tool turns on.
var ErrToolsUnsupported = errors.New("engine: tool calling is not supported by this engine")

// StopInterrupted is the Stats.StopReason of a remote reply whose stream
// was cut before the server finished it; the text so far is kept.
const StopInterrupted = "interrupted"

// ErrInterrupted is wrapped by the error of a reply whose stream was cut
// halfway (the server died, the network dropped). The text received so
// far is returned with it.
var ErrInterrupted = errors.New("the reply was interrupted")

// JoinContents is the plain-completion prompt of a conversation for a
// model without a chat template: the messages' texts in order.
func JoinContents(msgs []chat.Message) string {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
	}
	b := make([]byte, 0, n)
	for _, m := range msgs {
		b = append(b, m.Content...)
	}
	return string(b)
}
