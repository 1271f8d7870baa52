package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine"
)

type chatMessageOut struct {
	Role      string        `json:"role,omitempty"`
	Content   string        `json:"content"`
	ToolCalls []toolCallOut `json:"tool_calls,omitempty"`
}

// toolCallOut is a tool call in a response: Index is set in streamed
// deltas (the client assembles calls by index), absent in a message.
type toolCallOut struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func toolCallsOut(calls []chat.ToolCall, indexed bool) []toolCallOut {
	out := make([]toolCallOut, len(calls))
	for i, c := range calls {
		out[i].ID, out[i].Type = c.ID, "function"
		out[i].Function.Name, out[i].Function.Arguments = c.Function.Name, c.Function.Arguments
		if indexed {
			out[i].Index = &i
		}
	}
	return out
}

type chatChoice struct {
	Index        int             `json:"index"`
	Message      *chatMessageOut `json:"message,omitempty"`
	Delta        *chatMessageOut `json:"delta,omitempty"`
	Logprobs     any             `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *usage       `json:"usage,omitempty"`
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if !s.readRequest(w, r, &req) {
		return
	}
	msgs, err := req.chatMessages()
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	opts, err := req.options(s.model.Ctx)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	tools, _, err := chat.ToolsForChoice(req.Tools, req.ToolChoice)
	if err != nil {
		param := "tool_choice"
		if errors.Is(err, chat.ErrToolChoice) && len(req.ToolChoice) == 0 {
			param = "tools"
		}
		s.failErr(w, r, invalid(param, "%v", err))
		return
	}
	opts.Tools = tools
	if tools != nil {
		opts.ToolChoice = req.ToolChoice
	}
	var reply chat.Message // the answer, tool calls included
	id, created := newID("chatcmpl-"), unixNow()
	head := func(choices []chatChoice, u *usage) chatCompletion {
		return chatCompletion{ID: id, Object: "chat.completion.chunk", Created: created, Model: s.model.ID, Choices: choices, Usage: u}
	}
	s.generate(w, r, generation{
		stream: req.Stream,
		usage:  req.StreamOptions != nil && req.StreamOptions.IncludeUsage,
		run: func(ctx context.Context, e engine.Engine, emit func(chat.Event)) (string, chat.Stats, error) {
			var st chat.Stats
			var err error
			reply, st, err = e.ReplyMessage(ctx, msgs, opts, emit)
			if errors.Is(err, engine.ErrToolsUnsupported) {
				err = invalid("tools", "%v", err) // the request asks what this model cannot do
			}
			return reply.Content, st, err
		},
		beforeEnd: func() any {
			if len(reply.ToolCalls) == 0 {
				return nil
			}
			return head([]chatChoice{{Delta: &chatMessageOut{ToolCalls: toolCallsOut(reply.ToolCalls, true)}}}, nil)
		},
		first: func() any {
			return head([]chatChoice{{Delta: &chatMessageOut{Role: "assistant"}}}, nil)
		},
		chunk: func(delta string, finish *string) any {
			return head([]chatChoice{{Delta: &chatMessageOut{Content: delta}, FinishReason: finish}}, nil)
		},
		usageChunk: func(u *usage) any { return head([]chatChoice{}, u) },
		final: func(text string, st chat.Stats) any {
			fr := finishReason(st)
			c := head([]chatChoice{{Message: &chatMessageOut{Role: "assistant", Content: text, ToolCalls: toolCallsOut(reply.ToolCalls, false)}, FinishReason: &fr}}, usageOf(st))
			c.Object = "chat.completion"
			return c
		},
	})
}
