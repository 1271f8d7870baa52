package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine"
	"github.com/minfer/minfer/internal/engine/enginetest"
)

const weatherTools = `[{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
 {"type": "function", "function": {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}}}]`

func toolServer(t *testing.T, eng *enginetest.ToolEngine) (openai.Client, string) {
	t.Helper()
	s := New(Model{ID: "m", Ctx: 512, Exec: func(ctx context.Context, fn func(engine.Engine)) error { fn(eng); return nil }}, Config{})
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); s.Shutdown(context.Background()) })
	return openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0)), ts.URL
}

func rawJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Through the official OpenAI Go client: a reply in Hermes format comes back
// as tool_calls with finish_reason "tool_calls", whole and streamed (the
// client's accumulator assembles the streamed calls); the text before the
// call is the content.
func TestChatCompletionToolCalls(t *testing.T) {
	eng := &enginetest.ToolEngine{Format: chat.ToolFormatHermes,
		Script: "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call>"}
	client, _ := toolServer(t, eng)
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Zürich?")}}
	withTools := option.WithJSONSet("tools", rawJSON(t, weatherTools))

	c, err := client.Chat.Completions.New(ctx, params, withTools)
	if err != nil {
		t.Fatal(err)
	}
	ch := c.Choices[0]
	if ch.FinishReason != "tool_calls" || ch.Message.Content != "Let me look." || len(ch.Message.ToolCalls) != 2 {
		t.Fatalf("choice %+v", ch)
	}
	tc := ch.Message.ToolCalls[0]
	if tc.Type != "function" || tc.ID == "" || tc.Function.Name != "get_weather" || tc.Function.Arguments != `{"city":"Zürich"}` {
		t.Errorf("call 0 %+v", tc)
	}
	if tc := ch.Message.ToolCalls[1]; tc.Function.Name != "add" || tc.Function.Arguments != `{"a":1,"b":2}` {
		t.Errorf("call 1 %+v", tc)
	}
	var given []any
	if err := json.Unmarshal(eng.Opts.Tools, &given); err != nil || len(given) != 2 {
		t.Errorf("tools given to the engine: %s", eng.Opts.Tools)
	}

	stream := client.Chat.Completions.NewStreaming(ctx, params, withTools)
	var acc openai.ChatCompletionAccumulator
	var text strings.Builder
	for stream.Next() {
		chunk := stream.Current()
		acc.AddChunk(chunk)
		for _, c := range chunk.Choices {
			text.WriteString(c.Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	got := acc.Choices[0]
	if got.FinishReason != "tool_calls" || len(got.Message.ToolCalls) != 2 || strings.Contains(text.String(), "tool_call") {
		t.Fatalf("streamed: finish %q, calls %+v, text %q", got.FinishReason, got.Message.ToolCalls, text.String())
	}
	if tc := got.Message.ToolCalls[0]; tc.Function.Name != "get_weather" || tc.Function.Arguments != `{"city":"Zürich"}` || tc.ID == "" {
		t.Errorf("streamed call %+v", tc)
	}
	if strings.TrimSpace(text.String()) != "Let me look." {
		t.Errorf("streamed text %q", text.String())
	}
}

// tool_choice: "none" gives the engine no tools (the reply is text, even
// one that looks like a call); a named function gives only that one;
// "required" and "auto" give all of them.
func TestToolChoice(t *testing.T) {
	eng := &enginetest.ToolEngine{Format: chat.ToolFormatHermes, Script: "<tool_call>\n{\"name\": \"add\", \"arguments\": {}}\n</tool_call>"}
	client, _ := toolServer(t, eng)
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("1+2?")}}
	withTools := option.WithJSONSet("tools", rawJSON(t, weatherTools))

	c, err := client.Chat.Completions.New(ctx, params, withTools, option.WithJSONSet("tool_choice", "none"))
	if err != nil {
		t.Fatal(err)
	}
	if eng.Opts.Tools != nil || len(c.Choices[0].Message.ToolCalls) != 0 || c.Choices[0].FinishReason != "stop" {
		t.Errorf("none: tools %s, choice %+v", eng.Opts.Tools, c.Choices[0])
	}
	c, err = client.Chat.Completions.New(ctx, params, withTools, option.WithJSONSet("tool_choice", rawJSON(t, `{"type": "function", "function": {"name": "add"}}`)))
	if err != nil {
		t.Fatal(err)
	}
	var defs []struct {
		Function struct{ Name string } `json:"function"`
	}
	json.Unmarshal(eng.Opts.Tools, &defs)
	if len(defs) != 1 || defs[0].Function.Name != "add" || c.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("named: tools %s, finish %q", eng.Opts.Tools, c.Choices[0].FinishReason)
	}
	for _, choice := range []string{"auto", "required"} {
		if _, err := client.Chat.Completions.New(ctx, params, withTools, option.WithJSONSet("tool_choice", choice)); err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(eng.Opts.Tools, &defs)
		if len(defs) != 2 {
			t.Errorf("%s: %d tools", choice, len(defs))
		}
	}
}

// The second leg of a round trip: the assistant's tool_calls and the tool
// results reach the engine as chat messages (the tool's name filled in from
// its call when the client leaves it out).
func TestToolRoundTripMessages(t *testing.T) {
	eng := &enginetest.ToolEngine{Format: chat.ToolFormatHermes, Script: "It is 21 degrees."}
	client, _ := toolServer(t, eng)
	msgs := rawJSON(t, `[
		{"role": "user", "content": "Weather in Paris?"},
		{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
		{"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"}]`)
	c, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m"},
		option.WithJSONSet("messages", msgs), option.WithJSONSet("tools", rawJSON(t, weatherTools)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Choices[0].Message.Content != "It is 21 degrees." || c.Choices[0].FinishReason != "stop" {
		t.Errorf("choice %+v", c.Choices[0])
	}
	if len(eng.Msgs) != 3 {
		t.Fatalf("engine got %d messages", len(eng.Msgs))
	}
	call, result := eng.Msgs[1], eng.Msgs[2]
	if call.Role != "assistant" || call.Content != "" || len(call.ToolCalls) != 1 || call.ToolCalls[0].ID != "call_1" ||
		call.ToolCalls[0].Function.Name != "get_weather" || call.ToolCalls[0].Function.Arguments != `{"city": "Paris"}` {
		t.Errorf("assistant turn %+v", call)
	}
	if result.Role != "tool" || result.ToolCallID != "call_1" || result.Name != "get_weather" || result.Content != `{"temp": 21}` {
		t.Errorf("tool turn %+v", result)
	}
}

func TestToolRequestsRefused(t *testing.T) {
	eng := &enginetest.ToolEngine{Script: "x"}
	_, url := toolServer(t, eng)
	for _, c := range []struct{ body, param string }{
		{`{"model": "m", "messages": [{"role": "tool", "content": "r"}]}`, "messages[0].tool_call_id"},
		{`{"model": "m", "messages": [{"role": "user", "content": "q", "tool_calls": [{"type": "function", "function": {"name": "f"}}]}]}`, "messages[0].tool_calls"},
		{`{"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"type": "function", "function": {}}]}]}`, "messages[0].tool_calls[0]"},
		{`{"model": "m", "messages": [{"role": "user", "content": "q"}], "tools": {"a": 1}}`, "tools"},
		{`{"model": "m", "messages": [{"role": "user", "content": "q"}], "tools": [], "tool_choice": "always"}`, "tool_choice"},
		{`{"model": "m", "messages": [{"role": "user", "content": "q"}], "tool_choice": "required"}`, "tool_choice"},
		{`{"model": "m", "messages": [{"role": "user", "content": "q"}], "tools": [{"type": "function", "function": {"name": "a"}}], "tool_choice": {"type": "function", "function": {"name": "b"}}}`, "tool_choice"},
	} {
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct {
				Param   string `json:"param"`
				Message string `json:"message"`
			} `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || body.Error.Param != c.param {
			t.Errorf("%s: %d param %q (%s), want 400 param %q", c.body, resp.StatusCode, body.Error.Param, body.Error.Message, c.param)
		}
	}
}

func TestToolsToAModelWithoutTemplate(t *testing.T) {
	// A model that cannot take tools (no chat template).
	_, url := toolServer(t, &enginetest.ToolEngine{Err: engine.ErrToolsUnsupported})
	resp, err := http.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model": "m", "messages": [{"role": "user", "content": "q"}], "tools": `+weatherTools+`}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error struct{ Param, Message string } `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusBadRequest || body.Error.Param != "tools" || !strings.Contains(body.Error.Message, "tool calling is not supported") {
		t.Errorf("%d %+v", resp.StatusCode, body.Error)
	}
}
