package chat

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/minfer/minfer/internal/jinja"
)

// Message is one turn of a conversation, shaped as the OpenAI chat API has
// it. Role is "system", "user", "assistant" or "tool" (templates may accept
// others). An assistant turn may carry ToolCalls (its Content then often
// empty); a "tool" turn is the result of one call, naming it by ToolCallID
// and Name.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// ToolCall is one function call made by the assistant.
type ToolCall struct {
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its arguments as JSON text
// (the OpenAI wire form is a string holding a JSON object).
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// UnmarshalJSON accepts arguments both as the OpenAI API sends them (a
// string holding JSON) and as Hugging Face chat templates expect them (a
// JSON object), keeping the object's text, and so its key order, as is.
func (f *FunctionCall) UnmarshalJSON(data []byte) error {
	var raw struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	f.Name = raw.Name
	args := bytes.TrimSpace(raw.Arguments)
	switch {
	case len(args) == 0 || bytes.Equal(args, []byte("null")):
		f.Arguments = ""
	case args[0] == '"':
		if err := json.Unmarshal(args, &f.Arguments); err != nil {
			return fmt.Errorf("tool call arguments: %w", err)
		}
	default:
		f.Arguments = string(args)
	}
	return nil
}

// UnmarshalJSON accepts "content": null (OpenAI clients send it on an
// assistant turn that only calls tools) as empty content.
func (m *Message) UnmarshalJSON(data []byte) error {
	type plain Message
	var raw struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*m = Message(raw.plain)
	m.Content = ""
	if c := bytes.TrimSpace(raw.Content); len(c) > 0 && !bytes.Equal(c, []byte("null")) {
		if err := json.Unmarshal(c, &m.Content); err != nil {
			return fmt.Errorf("message content: %w", err)
		}
	}
	return nil
}

// hasContent reports whether the message has a content key when rendered:
// an assistant turn that only calls tools has none, as OpenAI clients send
// it, so templates testing "message.content is defined" see it absent.
func (m Message) hasContent() bool {
	return m.Content != "" || len(m.ToolCalls) == 0
}

// messageValues builds ordered dicts, so a template that prints a message
// (tojson) sees the keys in the order the API gives them.
func messageValues(msgs []Message) jinja.Value {
	items := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		dict := d.AsDict()
		dict.Set("role", jinja.NewString(m.Role))
		if m.hasContent() {
			dict.Set("content", jinja.NewString(m.Content))
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]jinja.Value, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				calls[j] = toolCallValue(tc)
			}
			dict.Set("tool_calls", jinja.NewList(calls))
		}
		if m.ToolCallID != "" {
			dict.Set("tool_call_id", jinja.NewString(m.ToolCallID))
		}
		if m.Name != "" {
			dict.Set("name", jinja.NewString(m.Name))
		}
		items[i] = d
	}
	return jinja.NewList(items)
}

// toolCallValue gives a template {id, type, function: {name, arguments}}
// with arguments as a dict when they are a JSON object (Hugging Face
// templates print them with tojson or iterate over them) and as the text
// otherwise.
func toolCallValue(tc ToolCall) jinja.Value {
	fn := jinja.NewDict()
	fn.AsDict().Set("name", jinja.NewString(tc.Function.Name))
	args := jinja.NewString(tc.Function.Arguments)
	if v, err := jinja.FromJSON([]byte(tc.Function.Arguments)); err == nil && v.IsDict() {
		args = v
	}
	fn.AsDict().Set("arguments", args)
	call := jinja.NewDict()
	if tc.ID != "" {
		call.AsDict().Set("id", jinja.NewString(tc.ID))
	}
	typ := tc.Type
	if typ == "" {
		typ = "function"
	}
	call.AsDict().Set("type", jinja.NewString(typ))
	call.AsDict().Set("function", fn)
	return call
}
