package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"

	"github.com/minfer/minfer/core/chat"
)

// badRequest is a 400 (or 413) with OpenAI's param field.
type badRequest struct {
	status int
	param  string
	code   string
	msg    string
}

func (e *badRequest) Error() string { return e.msg }

func invalid(param, format string, a ...any) error {
	return &badRequest{status: http.StatusBadRequest, param: param, msg: fmt.Sprintf(format, a...)}
}

// message is one chat message as the API sends it: an assistant turn may
// carry tool_calls, a "tool" turn answers one by tool_call_id.
type message struct {
	Role       string          `json:"role"`
	Content    content         `json:"content"`
	ToolCalls  []chat.ToolCall `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
}

// content is a string, null, or an array of parts of which only "text"
// parts are understood.
type content struct {
	text string
	set  bool
}

func (c *content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		c.set = true
		return json.Unmarshal(b, &c.text)
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return errors.New("content must be a string or an array of text parts")
	}
	for _, p := range parts {
		if p.Type != "text" {
			return fmt.Errorf("content parts of type %q are not supported (only \"text\")", p.Type)
		}
		c.text += p.Text
	}
	c.set = true
	return nil
}

// stopList is "stop": a string, an array of strings, or null.
type stopList []string

func (s *stopList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		return nil
	case len(b) > 0 && b[0] == '"':
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = stopList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("stop must be a string or an array of strings")
	}
	*s = many
	return nil
}

// sampling are the generation fields chat and text completions share.
type sampling struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int     `json:"max_tokens"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
	TopP                *float64 `json:"top_p"`
	Seed                *int64   `json:"seed"`
	PresencePenalty     *float64 `json:"presence_penalty"`
	FrequencyPenalty    *float64 `json:"frequency_penalty"`
	Stop                stopList `json:"stop"`
	N                   *int     `json:"n"`
}

func (p *sampling) model() string { return p.Model }

type chatRequest struct {
	sampling
	Messages []message `json:"messages"`
	// Tools (an array of {type: "function", function: {name, description,
	// parameters}}) and ToolChoice ("auto", "none", "required" or
	// {type: "function", function: {name}}) are kept as JSON: the chat
	// template renders the tools as the client wrote them.
	Tools             json.RawMessage `json:"tools"`
	ToolChoice        json.RawMessage `json:"tool_choice"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
}

type completionRequest struct {
	sampling
	Prompt json.RawMessage `json:"prompt"`
	Echo   bool            `json:"echo"`
	Suffix *string         `json:"suffix"`
	// Logprobs is refused when set: no log probabilities yet.
	Logprobs *int `json:"logprobs"`
	BestOf   *int `json:"best_of"`
}

// decode reads a JSON body into v: 413 past the body limit, 400 for
// anything that is not one JSON object of the right shape.
func decode(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &badRequest{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body larger than %d bytes", tooBig.Limit)}
		}
		return invalid("", "could not read the request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return invalid("", "the request body is empty: send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := strings.TrimPrefix(te.Field, "sampling.")
			return invalid(field, "%s: expected %s, got a JSON %s", field, goTypeName(te.Type.String()), te.Value)
		}
		return invalid("", "the request body is not valid JSON: %v", err)
	}
	if dec.More() {
		return invalid("", "the request body holds more than one JSON value")
	}
	return nil
}

func goTypeName(t string) string {
	switch t {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "*int", "int", "*int64", "int64":
		return "an integer"
	case "*float64", "float64":
		return "a number"
	}
	return "another type"
}

// options turns the sampling fields into generation options, checking
// OpenAI's ranges. ctx is the context length (max_tokens is clamped).
func (p *sampling) options(ctx int) (chat.GenOptions, error) {
	o := chat.GenOptions{Sampler: chat.DefaultSamplerSettings()}
	if p.N != nil && *p.N != 1 {
		return o, invalid("n", "n must be 1: one choice per request")
	}
	mt := p.MaxTokens
	if p.MaxCompletionTokens != nil {
		mt = p.MaxCompletionTokens
	}
	if mt != nil {
		if *mt < 1 {
			return o, invalid("max_tokens", "max_tokens must be at least 1, got %d", *mt)
		}
		o.MaxTokens = min(*mt, ctx)
	}
	s := &o.Sampler
	for _, f := range []struct {
		name   string
		v      *float64
		lo, hi float64
		dst    *float32
	}{
		{"temperature", p.Temperature, 0, 2, &s.Temperature},
		{"top_p", p.TopP, 0, 1, &s.TopP},
		{"presence_penalty", p.PresencePenalty, -2, 2, &s.PresencePenalty},
		{"frequency_penalty", p.FrequencyPenalty, -2, 2, &s.FrequencyPenalty},
	} {
		if f.v == nil {
			continue
		}
		if math.IsNaN(*f.v) || *f.v < f.lo || *f.v > f.hi {
			return o, invalid(f.name, "%s must be between %g and %g, got %g", f.name, f.lo, f.hi, *f.v)
		}
		*f.dst = float32(*f.v)
	}
	if p.Seed != nil {
		s.Seed = uint64(*p.Seed)
	} else {
		s.Seed = rand.Uint64()
	}
	if len(p.Stop) > 16 {
		return o, invalid("stop", "at most 16 stop strings, got %d", len(p.Stop))
	}
	for _, st := range p.Stop {
		if st == "" {
			return o, invalid("stop", "stop strings must not be empty")
		}
	}
	o.Stop = p.Stop
	if err := s.Validate(); err != nil {
		return o, invalid("", "%v", err)
	}
	return o, nil
}

// chatMessages checks and converts the messages.
func (c *chatRequest) chatMessages() ([]chat.Message, error) {
	if len(c.Messages) == 0 {
		return nil, invalid("messages", "messages must hold at least one message")
	}
	out := make([]chat.Message, 0, len(c.Messages))
	for i, m := range c.Messages {
		role := m.Role
		switch role {
		case "system", "user", "assistant", "tool":
		case "developer":
			role = "system"
		case "":
			return nil, invalid(fmt.Sprintf("messages[%d].role", i), "messages[%d] has no role", i)
		case "function":
			return nil, invalid(fmt.Sprintf("messages[%d].role", i), "messages[%d]: the deprecated role \"function\" is not supported (use \"tool\")", i)
		default:
			return nil, invalid(fmt.Sprintf("messages[%d].role", i), "messages[%d]: unknown role %q (want system, user, assistant or tool)", i, role)
		}
		if !m.Content.set && role != "assistant" {
			return nil, invalid(fmt.Sprintf("messages[%d].content", i), "messages[%d] has no content", i)
		}
		if len(m.ToolCalls) > 0 && role != "assistant" {
			return nil, invalid(fmt.Sprintf("messages[%d].tool_calls", i), "messages[%d]: only assistant messages carry tool_calls", i)
		}
		for j, tc := range m.ToolCalls {
			if tc.Type != "" && tc.Type != "function" || tc.Function.Name == "" {
				return nil, invalid(fmt.Sprintf("messages[%d].tool_calls[%d]", i, j), "messages[%d].tool_calls[%d] must be a function call with a name", i, j)
			}
		}
		if role == "tool" && m.ToolCallID == "" {
			return nil, invalid(fmt.Sprintf("messages[%d].tool_call_id", i), "messages[%d]: a tool message needs the tool_call_id it answers", i)
		}
		msg := chat.Message{Role: role, Content: m.Content.text, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name}
		if role == "tool" && msg.Name == "" {
			msg.Name = toolNameOf(out, m.ToolCallID) // templates print the tool's name
		}
		out = append(out, msg)
	}
	return out, nil
}

// promptText checks the completion prompt: one string (or an array of
// exactly one string).
func (c *completionRequest) promptText() (string, error) {
	switch {
	case c.Echo:
		return "", invalid("echo", "echo is not supported")
	case c.Suffix != nil && *c.Suffix != "":
		return "", invalid("suffix", "suffix is not supported")
	case c.Logprobs != nil:
		return "", invalid("logprobs", "logprobs are not supported")
	case c.BestOf != nil && *c.BestOf != 1:
		return "", invalid("best_of", "best_of must be 1")
	}
	raw := bytes.TrimSpace(c.Prompt)
	if len(raw) == 0 || string(raw) == "null" {
		return "", invalid("prompt", "prompt is required")
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return one, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err == nil && len(many) == 1 {
		return many[0], nil
	}
	return "", invalid("prompt", "prompt must be a string (or an array of one string)")
}

// toolNameOf is the function name of the earlier call with id.
func toolNameOf(msgs []chat.Message, id string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, tc := range msgs[i].ToolCalls {
			if tc.ID == id {
				return tc.Function.Name
			}
		}
	}
	return ""
}
