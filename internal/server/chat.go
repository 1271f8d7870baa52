package server

import (
	"context"
	"net/http"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine"
)

type chatMessageOut struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
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
	if err := decode(r, &req); err != nil {
		s.failErr(w, r, err)
		return
	}
	if err := s.checkModel(req.Model); err != nil {
		s.failModel(w, r, err)
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
	id, created := newID("chatcmpl-"), unixNow()
	head := func(choices []chatChoice, u *usage) chatCompletion {
		return chatCompletion{ID: id, Object: "chat.completion.chunk", Created: created, Model: s.model.ID, Choices: choices, Usage: u}
	}
	s.generate(w, r, generation{
		stream: req.Stream,
		usage:  req.StreamOptions != nil && req.StreamOptions.IncludeUsage,
		run: func(ctx context.Context, e engine.Engine, emit func(chat.Event)) (string, chat.Stats, error) {
			return e.Reply(ctx, msgs, opts, emit)
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
			c := head([]chatChoice{{Message: &chatMessageOut{Role: "assistant", Content: text}, FinishReason: &fr}}, usageOf(st))
			c.Object = "chat.completion"
			return c
		},
	})
}
