package chat

import (
	"errors"
	"fmt"
)

// ModelTemplateError is a failure of the model's own chat template (it
// raised, broke the engine's limits, or does not parse) while a built-in
// template could be used instead. Its text starts with "this model's chat
// template", which is what the CLI and the window show.
type ModelTemplateError struct {
	Err error
	// Fallback is the built-in family that can replace the template ("" when
	// none is known).
	Fallback string
}

func (e *ModelTemplateError) Error() string {
	msg := fmt.Sprintf("this model's chat template cannot render this conversation: %v", e.Err)
	if e.Fallback != "" {
		msg += fmt.Sprintf(" (the built-in %s template can be used instead)", e.Fallback)
	}
	return msg
}

func (e *ModelTemplateError) Unwrap() error { return e.Err }

// asModelTemplateError wraps a render failure of a model template (not of
// a built-in, and not the model's deliberate raise_exception, which the
// caller handles) for the user.
func (c *Conversation) asModelTemplateError(err error) error {
	if err == nil || c.tmpl == nil || c.tmpl.IsBuiltin() || !errors.Is(err, ErrTemplate) {
		return err
	}
	var mte *ModelTemplateError
	if errors.As(err, &mte) {
		return err
	}
	return &ModelTemplateError{Err: err, Fallback: c.tmpl.FallbackFamily()}
}

// UseBuiltin replaces the conversation's template with the built-in
// template of a family (after a ModelTemplateError, when the user accepts
// the fallback) and forgets the KV cache, whose prefix the old template
// rendered.
func (c *Conversation) UseBuiltin(family string) error {
	if c.tmpl == nil {
		return errors.New("chat: no template to replace (plain completion)")
	}
	t, err := Builtin(family, c.tmpl.BOS(), c.tmpl.EOS())
	if err != nil {
		return err
	}
	c.tmpl = t
	return c.Reset()
}

// FallbackFamily is the built-in family that can stand in for this
// template: its own family, or the one ForModel recognised from the model's
// architecture and name; "" when none.
func (t *Template) FallbackFamily() string {
	if t == nil {
		return ""
	}
	if t.fallback != "" {
		return t.fallback
	}
	return t.family
}
