package chat

import (
	"errors"
	"testing"
)

func TestToolsForChoice(t *testing.T) {
	tools := `[{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "b", "parameters": {}}}]`
	for _, c := range []struct {
		tools, choice string
		render        string
		parse         bool
		err           bool
	}{
		{tools, "", tools, true, false},
		{tools, "null", tools, true, false},
		{tools, `"auto"`, tools, true, false},
		{tools, `"required"`, tools, true, false},
		{tools, `"none"`, "", false, false},
		{tools, `{"type": "function", "function": {"name": "b"}}`, `[{"type": "function", "function": {"name": "b", "parameters": {}}}]`, true, false},
		{"", "", "", false, false},
		{"", `"auto"`, "", false, false},
		{"", `"required"`, "", false, true},
		{tools, `{"type": "function", "function": {"name": "c"}}`, "", false, true},
		{tools, `"sometimes"`, "", false, true},
		{tools, `{"type": "tool"}`, "", false, true},
		{`{"name": "a"}`, "", "", false, true},
	} {
		render, parse, err := ToolsForChoice([]byte(c.tools), []byte(c.choice))
		if (err != nil) != c.err || err != nil && !errors.Is(err, ErrToolChoice) {
			t.Errorf("%s / %s: error %v, want error %v", c.tools, c.choice, err, c.err)
			continue
		}
		if string(render) != c.render || parse != c.parse {
			t.Errorf("%s / %s: render %s parse %v, want %s %v", c.tools, c.choice, render, parse, c.render, c.parse)
		}
	}
}
