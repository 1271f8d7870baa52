package chat

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minfer/minfer/internal/ggtest"
)

type wantCall struct{ name, args, id string }

// Replies written in each family's documented format.
var toolReplies = []struct {
	name    string
	format  ToolFormat
	reply   string
	content string // text without the calls
	calls   []wantCall
}{
	{"hermes", ToolFormatHermes,
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\", \"unit\": \"celsius\"}}\n</tool_call>",
		"", []wantCall{{"get_weather", `{"city":"Zürich","unit":"celsius"}`, ""}}},
	{"hermes two calls after text", ToolFormatHermes,
		"Let me check both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2.5}}\n</tool_call>",
		"Let me check both.\n", []wantCall{{"get_weather", `{"city":"Paris"}`, ""}, {"add", `{"a":1,"b":2.5}`, ""}}},
	{"qwen missing close tag", ToolFormatHermes,
		"<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n",
		"", []wantCall{{"add", `{"a":1,"b":2}`, ""}}},
	{"llama3 json", ToolFormatLlama3,
		`{"name": "get_weather", "parameters": {"city": "Zürich", "unit": "celsius"}}`,
		"", []wantCall{{"get_weather", `{"city":"Zürich","unit":"celsius"}`, ""}}},
	{"llama3 python_tag json", ToolFormatLlama3,
		`<|python_tag|>{"name": "add", "parameters": {"a": 1, "b": 2}}`,
		"", []wantCall{{"add", `{"a":1,"b":2}`, ""}}},
	{"llama3 two calls", ToolFormatLlama3,
		`{"name": "a", "parameters": {"x": "1;2"}}; {"name": "b", "parameters": {}}`,
		"", []wantCall{{"a", `{"x":"1;2"}`, ""}, {"b", `{}`, ""}}},
	{"llama3 builtin tool", ToolFormatLlama3,
		`<|python_tag|>brave_search.call(query="weather in Zürich, today", count=3)`,
		"", []wantCall{{"brave_search", `{"query":"weather in Zürich, today","count":3}`, ""}}},
	{"mistral", ToolFormatMistral,
		`[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2c3d4e"}]`,
		"", []wantCall{{"get_weather", `{"city":"Paris"}`, "a1b2c3d4e"}}},
	{"mistral args form", ToolFormatMistral,
		`[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}`,
		"", []wantCall{{"get_weather", `{"city":"Paris"}`, ""}}},
	{"command-r plus", ToolFormatCommandR,
		"Plan: I will look up the weather.\nAction: ```json\n[\n    {\n        \"tool_name\": \"get_weather\",\n        \"parameters\": {\n            \"city\": \"Zürich\"\n        }\n    }\n]\n```",
		"Plan: I will look up the weather.\n", []wantCall{{"get_weather", `{"city":"Zürich"}`, ""}}},
	{"command-r7b", ToolFormatCommandR7B,
		"<|START_THINKING|>I need the weather.<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Zürich\"}}\n]<|END_ACTION|>",
		"<|START_THINKING|>I need the weather.<|END_THINKING|>", []wantCall{{"get_weather", `{"city":"Zürich"}`, "0"}}},
	{"functionary", ToolFormatFunctionary,
		`<function=get_weather>{"city": "Zürich"}</function>`,
		"", []wantCall{{"get_weather", `{"city":"Zürich"}`, ""}}},
	{"functionary python", ToolFormatFunctionary,
		"<|python_tag|>print(1 + 1)",
		"", []wantCall{{"python", `{"code":"print(1 + 1)"}`, ""}}},
	{"firefunction", ToolFormatFirefunction,
		` functools[{"name": "get_weather", "arguments": {"city": "Zürich"}}, {"name": "add", "arguments": {"a": 1, "b": 2}}]`,
		" ", []wantCall{{"get_weather", `{"city":"Zürich"}`, ""}, {"add", `{"a":1,"b":2}`, ""}}},
	// Replies without calls, and calls that do not parse: the text is kept.
	{"hermes plain text", ToolFormatHermes, "It is sunny. Use <b>tags</b> freely <tool", "It is sunny. Use <b>tags</b> freely <tool", nil},
	{"hermes broken json", ToolFormatHermes, "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1,\n</tool_call>", "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1,\n</tool_call>", nil},
	{"llama3 json that is no call", ToolFormatLlama3, `{"answer": 42}`, `{"answer": 42}`, nil},
	{"llama3 text", ToolFormatLlama3, "  The answer is 42.", "  The answer is 42.", nil},
	{"mistral broken", ToolFormatMistral, "[TOOL_CALLS] [{\"name\": ", "[TOOL_CALLS] [{\"name\": ", nil},
	{"functionary no json", ToolFormatFunctionary, "<function=add>1, 2</function>", "<function=add>1, 2</function>", nil},
	{"none", ToolFormatNone, "<tool_call>{}</tool_call>", "<tool_call>{}</tool_call>", nil},
}

func checkResult(t *testing.T, r ToolResult, content string, calls []wantCall) {
	t.Helper()
	if r.Content != content {
		t.Errorf("content %q, want %q", r.Content, content)
	}
	if len(r.Calls) != len(calls) {
		t.Fatalf("%d calls %+v, want %d (parse error %v)", len(r.Calls), r.Calls, len(calls), r.ParseErr)
	}
	for i, w := range calls {
		c := r.Calls[i]
		if c.Function.Name != w.name || c.Function.Arguments != w.args || c.Type != "function" {
			t.Errorf("call %d = %+v, want %s(%s)", i, c, w.name, w.args)
		}
		if w.id != "" && c.ID != w.id || c.ID == "" {
			t.Errorf("call %d id %q, want %q", i, c.ID, w.id)
		}
	}
	if len(calls) == 0 && strings.Contains(content, "{") && r.ParseErr == nil && r.Content != content {
		t.Error("a failed parse must say why")
	}
}

func TestParseToolCalls(t *testing.T) {
	for _, c := range toolReplies {
		t.Run(c.name, func(t *testing.T) {
			checkResult(t, ParseToolCalls(c.format, c.reply), c.content, c.calls)
		})
	}
}

// Streamed one byte at a time (and in uneven chunks), the shown text never
// contains a marker or part of a call, shown text + Tail is the content, and
// the calls are those of the whole reply.
func TestToolStreamHoldsBackCalls(t *testing.T) {
	for _, c := range toolReplies {
		for _, chunk := range []int{1, 3, 7} {
			s := NewToolStream(c.format)
			var shown strings.Builder
			for i := 0; i < len(c.reply); i += chunk {
				shown.WriteString(s.Push(c.reply[i:min(i+chunk, len(c.reply))]))
			}
			r := s.Finish()
			if got := shown.String() + r.Tail; got != r.Content {
				t.Errorf("%s/%d: shown %q + tail %q != content %q", c.name, chunk, shown.String(), r.Tail, r.Content)
			}
			if len(c.calls) > 0 {
				for _, m := range append(c.format.markers(), "{\"name\"") {
					if strings.Contains(shown.String(), m) {
						t.Errorf("%s/%d: marker %q shown: %q", c.name, chunk, m, shown.String())
					}
				}
			}
			checkResult(t, r, c.content, c.calls)
		}
	}
}

// Text that only looks like the start of a marker is released as soon as
// it cannot be one.
func TestToolStreamReleasesFalseStarts(t *testing.T) {
	s := NewToolStream(ToolFormatHermes)
	if got := s.Push("a <tool"); got != "a " {
		t.Errorf("Push = %q, want the text before the possible marker", got)
	}
	if got := s.Push("box> b"); got != "<toolbox> b" {
		t.Errorf("Push = %q, want the held text released", got)
	}
	if r := s.Finish(); r.Tail != "" || len(r.Calls) != 0 {
		t.Errorf("Finish = %+v", r)
	}
}

func TestParseErrorsWrapSentinel(t *testing.T) {
	r := ParseToolCalls(ToolFormatHermes, "<tool_call>{oops</tool_call>")
	if !errors.Is(r.ParseErr, ErrToolCallSyntax) {
		t.Errorf("ParseErr = %v, want ErrToolCallSyntax", r.ParseErr)
	}
}

func TestDetectToolFormatOnTestdata(t *testing.T) {
	want := map[string]ToolFormat{
		"CohereForAI-c4ai-command-r-plus-tool_use.jinja":      ToolFormatCommandR,
		"CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja": ToolFormatCommandR7B,
		"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja": ToolFormatHermes,
		"Qwen-Qwen2.5-7B-Instruct.jinja":                      ToolFormatHermes,
		"Qwen-Qwen3-0.6B.jinja":                               ToolFormatHermes,
		"fireworks-ai-llama-3-firefunction-v2.jinja":          ToolFormatFirefunction,
		"meetkai-functionary-medium-v3.1.jinja":               ToolFormatFunctionary,
		"meta-llama-Llama-3.1-8B-Instruct.jinja":              ToolFormatLlama3,
		"meta-llama-Llama-3.2-3B-Instruct.jinja":              ToolFormatLlama3,
		"meta-llama-Llama-3.3-70B-Instruct.jinja":             ToolFormatLlama3,
	}
	dir := ggtest.Path(t, "templates")
	for _, f := range ggtest.Glob(t, "templates", "*.jinja") {
		name := filepath.Base(f)
		if got := DetectToolFormat(readTemplate(t, dir, name)); got != want[name] {
			t.Errorf("%s: %q, want %q", name, got, want[name])
		}
	}
	// Mistral's tool-calling templates carry [TOOL_CALLS] (the plain
	// mistral-instruct in testdata has no tools).
	if got := DetectToolFormat(`{{ '[AVAILABLE_TOOLS] ' }}{{ '[TOOL_CALLS] ' + calls }}`); got != ToolFormatMistral {
		t.Errorf("mistral: %q", got)
	}
}
