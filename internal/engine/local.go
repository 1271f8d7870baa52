package engine

import (
	"context"
	"fmt"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/chat"
)

// Local is a model loaded on this computer: a session and its
// conversation (which keeps the KV cache of the common prefix between
// calls, so follow-up requests evaluate only what is new).
type Local struct {
	Session *core.Session
	Conv    *chat.Conversation
	Source  chat.Source
}

// NewLocal opens the session's conversation.
func NewLocal(s *core.Session) (*Local, error) {
	conv, src, err := s.Conversation()
	if err != nil {
		return nil, err
	}
	return &Local{Session: s, Conv: conv, Source: src}, nil
}

// Reply implements Engine.
func (l *Local) Reply(ctx context.Context, msgs []chat.Message, opts chat.GenOptions, emit func(chat.Event)) (string, chat.Stats, error) {
	if l.Conv.Template() == nil {
		return l.Conv.Complete(ctx, JoinContents(msgs), opts, emit)
	}
	return l.Conv.Reply(ctx, msgs, opts, emit)
}

// Complete implements Engine.
func (l *Local) Complete(ctx context.Context, prompt string, opts chat.GenOptions, emit func(chat.Event)) (string, chat.Stats, error) {
	return l.Conv.Complete(ctx, prompt, opts, emit)
}

// Templated implements Engine.
func (l *Local) Templated() bool { return l.Conv.Template() != nil }

// Reset implements Engine.
func (l *Local) Reset() error { return l.Conv.Reset() }

// Where implements Engine.
func (l *Local) Where() string {
	return fmt.Sprintf("this computer · %s · context %d", l.Session.Plan(), l.Session.NCtxLen())
}

// CtxLen is the context length in tokens.
func (l *Local) CtxLen() int { return l.Session.NCtxLen() }
