// Package chat turns a conversation into prompt text with the model's chat
// template (Jinja from the GGUF key tokenizer.chat_template, or a built-in
// fallback) and picks the next token from logits (Sampler).
package chat

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/minfer/minfer/internal/jinja"
)

// ErrTemplate is the sentinel wrapped by every template compile or render
// failure, so callers can tell "the template refused" from other errors.
var ErrTemplate = errors.New("chat template")

// RaisedError is what a template's own raise_exception("...") produces, e.g.
// Gemma's "System role not supported". The application may react to it
// (merge the system prompt into the first user turn, say).
type RaisedError struct {
	Message string
}

func (e *RaisedError) Error() string { return "template raised: " + e.Message }

// maxRangeItems caps the template global range(): the engine's own range
// materialises the whole list, so range(10**12) in a hostile template would
// exhaust memory instead of failing.
const maxRangeItems = 1 << 20

// Template is a compiled chat template bound to the model's BOS/EOS text.
// A Template is safe for concurrent Render calls once SetClock is no longer
// being called.
type Template struct {
	compiled *jinja.Template
	source   string
	bos, eos string
	family   string // built-in family name, "" when unknown
	tools    ToolFormat
	builtin  bool   // true when the source is one of ours, not the model's
	fallback string // built-in family to offer when this template fails
	now      func() time.Time
	limits   jinja.Limits // zero: the engine's defaults
}

// NewTemplate compiles a Jinja chat template. bos and eos are the text of the
// model's BOS and EOS tokens, exposed to the template as bos_token and
// eos_token. The template's family (chatml, llama-3, …) is detected from its
// text so StopStrings can report its end-of-turn markers.
func NewTemplate(src, bos, eos string) (*Template, error) {
	if err := screen(src); err != nil {
		return nil, err
	}
	// The rewrites make the engine's whitespace handling match Jinja2's;
	// see trimfix.go.
	compiled, err := compileSafely(separateAdjacentTags(normalizeLineBreaks(src)))
	if err != nil {
		return nil, err
	}
	return &Template{
		compiled: compiled,
		source:   src,
		bos:      bos,
		eos:      eos,
		family:   DetectFamily(src),
		tools:    DetectToolFormat(src),
		now:      time.Now,
	}, nil
}

// compileSafely turns engine panics on malformed input into errors.
func compileSafely(src string) (compiled *jinja.Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			compiled, err = nil, fmt.Errorf("%w: compile panicked: %v", ErrTemplate, r)
		}
	}()
	compiled, err = jinja.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTemplate, err)
	}
	return compiled, nil
}

// Source returns the Jinja source the template was compiled from.
func (t *Template) Source() string { return t.source }

// Family returns the recognised template family ("chatml", "llama-3", …;
// see BuiltinNames), or "" when the text matches none of them.
func (t *Template) Family() string { return t.family }

// IsBuiltin reports whether the template is one of Minfer's fallbacks rather
// than the model's own.
func (t *Template) IsBuiltin() bool { return t.builtin }

// SetClock replaces the clock behind the template global strftime_now
// (Llama 3.x templates print today's date). Tests pass a fixed time.
func (t *Template) SetClock(now func() time.Time) { t.now = now }

// SetLimits replaces the engine's limits for this template's renders
// (zero fields keep jinja.DefaultLimits).
func (t *Template) SetLimits(l jinja.Limits) { t.limits = l }

// BOS returns the BOS text the template was given.
func (t *Template) BOS() string { return t.bos }

// EOS returns the EOS text the template was given.
func (t *Template) EOS() string { return t.eos }

// StartsWithBOS reports whether rendered (the output of Render) already
// begins with the BOS text. Many templates emit bos_token themselves; when
// this is true the caller must tokenize without adding another BOS.
// A nil Template (plain completion) reports false.
func (t *Template) StartsWithBOS(rendered string) bool {
	return t != nil && t.bos != "" && strings.HasPrefix(rendered, t.bos)
}

// StopStrings returns the end-of-turn markers of the template's family
// (e.g. "<|im_end|>" for chatml), which the generation loop should stop on
// in addition to the vocabulary's end-of-generation tokens. For families
// whose turns end with eos_token (llama-2, mistral, zephyr) it is the EOS
// text. Unknown families and a nil Template (plain completion) return nil.
func (t *Template) StopStrings() []string {
	if t == nil {
		return nil
	}
	return stopStringsFor(t.family, t.eos)
}

// Render formats msgs with the template. addGenerationPrompt appends the
// header of an assistant turn so the model continues as the assistant.
// The variable tools is left undefined.
func (t *Template) Render(msgs []Message, addGenerationPrompt bool) (string, error) {
	return t.render(msgs, jinja.Undefined(), addGenerationPrompt)
}

// RenderWithTools is Render with the template variable tools set from
// toolsJSON, a JSON array of tool schemas. Key order inside the JSON is
// kept, so templates that print tools with tojson reproduce it.
func (t *Template) RenderWithTools(msgs []Message, toolsJSON []byte, addGenerationPrompt bool) (string, error) {
	tools, err := jinja.FromJSON(toolsJSON) // key order and integers kept
	if err != nil {
		return "", fmt.Errorf("chat: tools JSON: %w", err)
	}
	if !tools.IsList() {
		return "", fmt.Errorf("chat: tools JSON must be an array, got %s", kindName(tools))
	}
	return t.render(msgs, tools, addGenerationPrompt)
}

func (t *Template) render(msgs []Message, tools jinja.Value, addGenerationPrompt bool) (out string, err error) {
	now := t.now
	if now == nil {
		now = time.Now
	}
	if t.builtin {
		msgs = builtinView(msgs)
	}
	data := map[string]jinja.Value{
		"messages":              messageValues(msgs),
		"add_generation_prompt": jinja.NewBool(addGenerationPrompt),
		"bos_token":             jinja.NewString(t.bos),
		"eos_token":             jinja.NewString(t.eos),
		"raise_exception":       jinja.NewCallable("raise_exception", raiseException),
		"strftime_now":          jinja.NewCallable("strftime_now", strftimeNowFunc(now)),
		"range":                 jinja.NewCallable("range", boundedRange),
	}
	if !tools.IsUndefined() {
		data["tools"] = tools
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("%w: render panicked: %v", ErrTemplate, r)
		}
	}()
	out, err = t.compiled.RenderValuesLimits(data, t.limits)
	if err != nil {
		var raised *RaisedError
		if errors.As(err, &raised) {
			return "", fmt.Errorf("%w: %w", ErrTemplate, raised)
		}
		return "", fmt.Errorf("%w: render: %w", ErrTemplate, err)
	}
	return out, nil
}

func raiseException(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.Undefined(), &RaisedError{Message: "raise_exception called without a message"}
	}
	msg := args[0].String()
	if args[0].IsString() {
		msg = args[0].AsString()
	}
	return jinja.Undefined(), &RaisedError{Message: msg}
}

func strftimeNowFunc(now func() time.Time) func([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
	return func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		if len(args) != 1 || !args[0].IsString() {
			return jinja.Undefined(), fmt.Errorf("strftime_now: want one format string, got %d arguments", len(args))
		}
		return jinja.NewString(Strftime(now(), args[0].AsString())), nil
	}
}

// boundedRange is Python's range() with a cap on the number of items.
func boundedRange(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	var bounds [3]int64
	for i, a := range args {
		if i >= 3 {
			break
		}
		switch {
		case a.IsInt():
			bounds[i] = a.AsInt()
		case a.IsBool():
			if a.AsBool() {
				bounds[i] = 1
			}
		default:
			return jinja.Undefined(), fmt.Errorf("range: argument %d is %s, not an integer", i+1, kindName(a))
		}
	}
	var start, stop, step int64
	switch len(args) {
	case 1:
		start, stop, step = 0, bounds[0], 1
	case 2:
		start, stop, step = bounds[0], bounds[1], 1
	case 3:
		start, stop, step = bounds[0], bounds[1], bounds[2]
	default:
		return jinja.Undefined(), fmt.Errorf("range: expected 1 to 3 arguments, got %d", len(args))
	}
	if step == 0 {
		return jinja.Undefined(), errors.New("range: step must not be zero")
	}
	var count uint64
	switch {
	case step > 0 && stop > start:
		count = (uint64(stop-start) + uint64(step) - 1) / uint64(step)
	case step < 0 && start > stop:
		count = (uint64(start-stop) + uint64(-step) - 1) / uint64(-step)
	}
	if count > maxRangeItems {
		return jinja.Undefined(), fmt.Errorf("range: %d items exceeds the limit of %d", count, maxRangeItems)
	}
	items := make([]jinja.Value, count)
	for i := range items {
		items[i] = jinja.NewInt(start + int64(i)*step)
	}
	return jinja.NewList(items), nil
}

func kindName(v jinja.Value) string {
	switch {
	case v.IsUndefined():
		return "undefined"
	case v.IsNone():
		return "none"
	case v.IsBool():
		return "a boolean"
	case v.IsInt():
		return "an integer"
	case v.IsFloat():
		return "a float"
	case v.IsString():
		return "a string"
	case v.IsList():
		return "a list"
	case v.IsDict():
		return "a dict"
	case v.IsCallable():
		return "a callable"
	}
	return "unknown"
}
