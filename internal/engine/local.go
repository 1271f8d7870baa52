package engine

import (
	"context"
	"errors"
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
	// OnTemplateFallback, when set, hears that the model's own template
	// failed on a conversation and the family's built-in one is used from
	// now on (err says why).
	OnTemplateFallback func(err error, family string)
	// AskBeforeFallback makes Reply return the *chat.ModelTemplateError
	// instead of switching templates, so the caller can ask the user (the
	// window offers the built-in template in a dialog; the CLI and the
	// server switch at once).
	AskBeforeFallback bool
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
	reply, st, err := l.Conv.Reply(ctx, msgs, opts, emit)
	if l.fallBack(err) {
		return l.Conv.Reply(ctx, msgs, opts, emit)
	}
	return reply, st, err
}

// fallBack reports whether err is the model's template failing on the
// conversation and the family's built-in template was switched to (unless
// AskBeforeFallback): then the caller tries again.
func (l *Local) fallBack(err error) bool {
	var mte *chat.ModelTemplateError
	if !errors.As(err, &mte) || mte.Fallback == "" || l.AskBeforeFallback {
		return false
	}
	if l.OnTemplateFallback != nil {
		l.OnTemplateFallback(err, mte.Fallback)
	}
	return l.Conv.UseBuiltin(mte.Fallback) == nil
}

// ReplyMessage implements Engine. A model without a chat template cannot
// be given tools.
func (l *Local) ReplyMessage(ctx context.Context, msgs []chat.Message, opts chat.GenOptions, emit func(chat.Event)) (chat.Message, chat.Stats, error) {
	if l.Conv.Template() == nil {
		if opts.Tools != nil {
			return chat.Message{}, chat.Stats{}, fmt.Errorf("%w: the model has no chat template to present tools", ErrToolsUnsupported)
		}
		text, st, err := l.Conv.Complete(ctx, JoinContents(msgs), opts, emit)
		return chat.Message{Role: "assistant", Content: text}, st, err
	}
	m, st, err := l.Conv.ReplyMessage(ctx, msgs, opts, emit)
	if l.fallBack(err) {
		return l.Conv.ReplyMessage(ctx, msgs, opts, emit)
	}
	return m, st, err
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
