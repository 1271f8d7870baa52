package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrToolChoice is wrapped by every invalid tools / tool_choice pair.
var ErrToolChoice = errors.New("chat: tool_choice")

// ToolsForChoice applies an OpenAI tool_choice to a request's tools (a JSON
// array) and returns the tools to render (nil: none) and whether the reply
// is to be parsed for calls:
//
//   - "auto", "required", absent or null: all tools, parsed. (Nothing forces
//     a call: without grammar-constrained sampling "required" is a request
//     to the model, as the prompt states it.)
//   - "none": no tools in the prompt, the reply is text.
//   - {"type": "function", "function": {"name": N}}: only N, parsed.
func ToolsForChoice(tools, choice json.RawMessage) (render []byte, parse bool, err error) {
	tools = bytes.TrimSpace(tools)
	if len(tools) == 0 || bytes.Equal(tools, []byte("null")) {
		tools = nil
	}
	var defs []json.RawMessage
	if tools != nil {
		if err := json.Unmarshal(tools, &defs); err != nil {
			return nil, false, fmt.Errorf("%w: tools must be an array: %v", ErrToolChoice, err)
		}
	}
	choice = bytes.TrimSpace(choice)
	if len(choice) == 0 || bytes.Equal(choice, []byte("null")) {
		return tools, tools != nil, nil
	}
	var mode string
	if json.Unmarshal(choice, &mode) == nil {
		switch mode {
		case "auto":
			return tools, tools != nil, nil
		case "required":
			if tools == nil {
				return nil, false, fmt.Errorf("%w: \"required\" without tools", ErrToolChoice)
			}
			return tools, true, nil
		case "none":
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("%w: unknown value %q (auto, none, required or a function)", ErrToolChoice, mode)
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(choice, &named); err != nil || named.Type != "function" || named.Function.Name == "" {
		return nil, false, fmt.Errorf("%w: want a string or {\"type\": \"function\", \"function\": {\"name\": …}}", ErrToolChoice)
	}
	for _, d := range defs {
		var def struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
			Name string `json:"name"`
		}
		if json.Unmarshal(d, &def) == nil && (def.Function.Name == named.Function.Name || def.Name == named.Function.Name) {
			return append(append([]byte("["), d...), ']'), true, nil
		}
	}
	return nil, false, fmt.Errorf("%w: function %q is not among the tools", ErrToolChoice, named.Function.Name)
}
