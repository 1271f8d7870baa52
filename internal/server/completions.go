package server

import (
	"context"
	"net/http"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine"
)

type textChoice struct {
	Index        int     `json:"index"`
	Text         string  `json:"text"`
	Logprobs     any     `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
}

type textCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []textChoice `json:"choices"`
	Usage   *usage       `json:"usage,omitempty"`
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if !s.readRequest(w, r, &req) {
		return
	}
	prompt, err := req.promptText()
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	opts, err := req.options(s.model.Ctx)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	id, created := newID("cmpl-"), unixNow()
	head := func(choices []textChoice, u *usage) textCompletion {
		return textCompletion{ID: id, Object: "text_completion", Created: created, Model: s.model.ID, Choices: choices, Usage: u}
	}
	s.generate(w, r, generation{
		stream: req.Stream,
		usage:  req.StreamOptions != nil && req.StreamOptions.IncludeUsage,
		run: func(ctx context.Context, e engine.Engine, emit func(chat.Event)) (string, chat.Stats, error) {
			return e.Complete(ctx, prompt, opts, emit)
		},
		chunk: func(delta string, finish *string) any {
			return head([]textChoice{{Text: delta, FinishReason: finish}}, nil)
		},
		usageChunk: func(u *usage) any { return head([]textChoice{}, u) },
		final: func(text string, st chat.Stats) any {
			fr := finishReason(st)
			return head([]textChoice{{Text: text, FinishReason: &fr}}, usageOf(st))
		},
	})
}
