package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine"
	"github.com/minfer/minfer/internal/engine/enginetest"
	"github.com/minfer/minfer/internal/server"
)

// scripted stands for a model behind `minfer serve` that calls tools in
// the Hermes format.
func scripted(reply string) *enginetest.ToolEngine {
	return &enginetest.ToolEngine{Script: reply, Format: chat.ToolFormatHermes}
}

// The tool definitions, keys deliberately not in sorted order: a server's
// template prints them as written.
const weatherTools = `[{"type":"function","function":{"name":"get_weather","description":"Weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},{"type":"function","function":{"name":"add","parameters":{"type":"object","properties":{"b":{"type":"number"},"a":{"type":"number"}}}}}]`

// serveScripted serves eng with `minfer serve`'s server and records the
// body of every chat request.
func serveScripted(t *testing.T, eng *enginetest.ToolEngine) (*engine.Remote, *[]map[string]json.RawMessage) {
	t.Helper()
	srv := server.New(server.Model{ID: "m", Ctx: 512,
		Exec: func(_ context.Context, fn func(engine.Engine)) error { fn(eng); return nil }}, server.Config{})
	h := srv.Handler()
	var bodies []map[string]json.RawMessage
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			b, _ := io.ReadAll(r.Body)
			var m map[string]json.RawMessage
			if err := json.Unmarshal(b, &m); err != nil {
				t.Errorf("request body %s: %v", b, err)
			}
			bodies = append(bodies, m)
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.Close(); srv.Shutdown(context.Background()) })
	r, _, err := engine.Connect(context.Background(), ts.URL, "", "m")
	if err != nil {
		t.Fatal(err)
	}
	return r, &bodies
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Through `minfer serve`: the tools reach the model as written, and a
// reply in Hermes format comes back as the assistant message's tool calls
// with the stop reason of a local reply that called tools; the text before
// the calls is the content and all emit sees. Streamed and not.
func TestRemoteToolCalls(t *testing.T) {
	for _, noStream := range []bool{false, true} {
		t.Run(fmt.Sprintf("nostream=%v", noStream), func(t *testing.T) {
			eng := scripted("Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call>")
			r, bodies := serveScripted(t, eng)
			r.NoStream = noStream
			opts := greedy(50)
			opts.Tools = []byte(weatherTools)
			var emitted strings.Builder
			m, st, err := r.ReplyMessage(context.Background(), []chat.Message{{Role: "user", Content: "Weather in Zürich?"}}, opts,
				func(ev chat.Event) { emitted.WriteString(ev.Text) })
			if err != nil {
				t.Fatal(err)
			}
			if m.Role != "assistant" || m.Content != "Let me look." || len(m.ToolCalls) != 2 || st.StopReason != chat.StopToolCalls {
				t.Fatalf("reply %+v, stop %q", m, st.StopReason)
			}
			if tc := m.ToolCalls[0]; tc.ID == "" || tc.Type != "function" || tc.Function.Name != "get_weather" || tc.Function.Arguments != `{"city":"Zürich"}` {
				t.Errorf("call 0 %+v", tc)
			}
			if tc := m.ToolCalls[1]; tc.ID == "" || tc.ID == m.ToolCalls[0].ID || tc.Function.Name != "add" || tc.Function.Arguments != `{"a":1,"b":2}` {
				t.Errorf("call 1 %+v", tc)
			}
			if got := strings.TrimSpace(emitted.String()); got != "Let me look." {
				t.Errorf("emitted %q", emitted.String())
			}
			if st.PromptTokens != 12 || st.Generated != 7 {
				t.Errorf("usage %+v", st)
			}
			if got := compact(t, string(eng.Opts.Tools)); got != weatherTools {
				t.Errorf("the model was given the tools\n%s\nwant (key order kept)\n%s", got, weatherTools)
			}
			if _, ok := (*bodies)[0]["tool_choice"]; ok {
				t.Errorf("tool_choice sent though none was asked for")
			}
		})
	}
}

// tool_choice goes to the server as given, with the tools that choice
// leaves (chat.ToolsForChoice); "none" leaves none and sends no tools.
func TestRemoteToolChoice(t *testing.T) {
	eng := scripted("<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call>")
	r, bodies := serveScripted(t, eng)
	ctx := context.Background()
	msgs := []chat.Message{{Role: "user", Content: "1+2?"}}
	for _, c := range []struct {
		choice    string
		tools     int // given to the model
		stop      string
		wireTools bool
	}{
		{`"required"`, 2, chat.StopToolCalls, true},
		{`"auto"`, 2, chat.StopToolCalls, true},
		{`{"type": "function", "function": {"name": "add"}}`, 1, chat.StopToolCalls, true},
		{`"none"`, 0, chat.StopEOG, false},
	} {
		tools, _, err := chat.ToolsForChoice([]byte(weatherTools), []byte(c.choice))
		if err != nil {
			t.Fatal(err)
		}
		opts := greedy(50)
		opts.Tools, opts.ToolChoice = tools, []byte(c.choice)
		m, st, err := r.ReplyMessage(ctx, msgs, opts, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.choice, err)
		}
		var given []json.RawMessage
		if eng.Opts.Tools != nil {
			if err := json.Unmarshal(eng.Opts.Tools, &given); err != nil {
				t.Fatal(err)
			}
		}
		body := (*bodies)[len(*bodies)-1]
		_, hasTools := body["tools"]
		if len(given) != c.tools || st.StopReason != c.stop || hasTools != c.wireTools || (c.tools > 0) != (len(m.ToolCalls) > 0) {
			t.Errorf("%s: %d tools given, %d calls, stop %q, tools on the wire %v", c.choice, len(given), len(m.ToolCalls), st.StopReason, hasTools)
		}
		if c.wireTools && compact(t, string(body["tool_choice"])) != compact(t, c.choice) {
			t.Errorf("%s: sent tool_choice %s", c.choice, body["tool_choice"])
		}
		if c.choice == `"none"` && !strings.Contains(m.Content, "<tool_call>") {
			t.Errorf("none: the reply is not kept as text: %+v", m)
		}
	}
}

// The second leg of a round trip: the assistant's tool calls and the tool's
// result reach the model behind the server as such, and its answer comes
// back as text.
func TestRemoteToolRoundTrip(t *testing.T) {
	for _, noStream := range []bool{false, true} {
		eng := scripted("It is 21 degrees in Paris.")
		r, bodies := serveScripted(t, eng)
		r.NoStream = noStream
		opts := greedy(50)
		opts.Tools = []byte(weatherTools)
		call := chat.ToolCall{ID: "call_1", Type: "function", Function: chat.FunctionCall{Name: "get_weather", Arguments: `{"city": "Paris"}`}}
		msgs := []chat.Message{
			{Role: "system", Content: "Be brief."},
			{Role: "user", Content: "Weather in Paris?"},
			{Role: "assistant", ToolCalls: []chat.ToolCall{call}},
			{Role: "tool", ToolCallID: "call_1", Name: "get_weather", Content: `{"temp": 21}`},
		}
		m, st, err := r.ReplyMessage(context.Background(), msgs, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.Content != "It is 21 degrees in Paris." || len(m.ToolCalls) != 0 || st.StopReason != chat.StopEOG {
			t.Errorf("nostream=%v: reply %+v, stop %q", noStream, m, st.StopReason)
		}
		if len(eng.Msgs) != 4 {
			t.Fatalf("the model got %d messages", len(eng.Msgs))
		}
		got := eng.Msgs[2]
		if got.Role != "assistant" || got.Content != "" || len(got.ToolCalls) != 1 || got.ToolCalls[0] != call {
			t.Errorf("assistant turn %+v", got)
		}
		if got := eng.Msgs[3]; got.Role != "tool" || got.ToolCallID != "call_1" || got.Name != "get_weather" || got.Content != `{"temp": 21}` {
			t.Errorf("tool turn %+v", got)
		}
		// On the wire: content null beside the calls, arguments a string.
		var wire []map[string]any
		if err := json.Unmarshal((*bodies)[0]["messages"], &wire); err != nil {
			t.Fatal(err)
		}
		if c, ok := wire[2]["content"]; ok && c != nil {
			t.Errorf("assistant tool-call turn sent with content %v", c)
		}
		// Reply, without tools, passes the tool turns on too.
		if _, _, err := r.Reply(context.Background(), msgs, greedy(50), nil); err != nil || len(eng.Msgs) != 4 || eng.Msgs[3].Role != "tool" || len(eng.Msgs[2].ToolCalls) != 1 {
			t.Errorf("Reply: %v, messages %+v", err, eng.Msgs)
		}
	}
}

// Streamed tool calls are assembled from their deltas by index: two calls
// interleaved, arguments in pieces, the id and name only in the first
// delta of each (as OpenAI's and llama.cpp's servers send them).
func TestRemoteToolCallDeltas(t *testing.T) {
	chunks := []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Checking"}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": "}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"add","arguments":"{\"a\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":" 1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}
	r := sseServer(t, chunks, true)
	var emitted strings.Builder
	m, st, err := r.ReplyMessage(context.Background(), []chat.Message{{Role: "user", Content: "q"}},
		chat.GenOptions{Tools: []byte(weatherTools)}, func(ev chat.Event) { emitted.WriteString(ev.Text) })
	if err != nil {
		t.Fatal(err)
	}
	want := []chat.ToolCall{
		{ID: "call_a", Type: "function", Function: chat.FunctionCall{Name: "get_weather", Arguments: `{"city": "Paris"}`}},
		{ID: "call_b", Type: "function", Function: chat.FunctionCall{Name: "add", Arguments: `{"a": 1}`}},
	}
	if m.Content != "Checking" || emitted.String() != "Checking" || len(m.ToolCalls) != 2 || m.ToolCalls[0] != want[0] || m.ToolCalls[1] != want[1] || st.StopReason != chat.StopToolCalls {
		t.Errorf("reply %+v, emitted %q, stop %q", m, emitted.String(), st.StopReason)
	}

	// Cut before the finish: interrupted, the text so far kept.
	r = sseServer(t, chunks[:4], false)
	m, st, err = r.ReplyMessage(context.Background(), []chat.Message{{Role: "user", Content: "q"}}, chat.GenOptions{Tools: []byte(weatherTools)}, nil)
	if !errors.Is(err, engine.ErrInterrupted) || st.StopReason != engine.StopInterrupted || m.Content != "Checking" {
		t.Errorf("cut stream: %v, stop %q, reply %+v", err, st.StopReason, m)
	}
}

// sseServer answers chat requests with chunks as server-sent events (and
// [DONE] when done is set) and lists one model.
func sseServer(t *testing.T, chunks []string, done bool) *engine.Remote {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",%s\n\n", c[1:])
		}
		if done {
			io.WriteString(w, "data: [DONE]\n\n")
		}
	}))
	t.Cleanup(ts.Close)
	r, _, err := engine.Connect(context.Background(), ts.URL, "", "m")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Requests that cannot be sent are refused before anything is sent; a
// server that cannot take tools says so, and the error carries its words.
func TestRemoteToolErrors(t *testing.T) {
	eng := scripted("x")
	r, bodies := serveScripted(t, eng)
	ctx := context.Background()
	user := chat.Message{Role: "user", Content: "q"}
	for _, c := range []struct {
		msgs []chat.Message
		opts chat.GenOptions
		want string
	}{
		{[]chat.Message{user}, chat.GenOptions{Tools: []byte(`{"a": 1}`)}, "not a JSON array"},
		{[]chat.Message{user}, chat.GenOptions{Tools: []byte(weatherTools), ToolChoice: []byte(`{auto`)}, "tool_choice is not JSON"},
		{[]chat.Message{user, {Role: "tool", Content: "r"}}, chat.GenOptions{}, "without the id of its call"},
		{[]chat.Message{user, {Role: "assistant", ToolCalls: []chat.ToolCall{{ID: "c", Type: "function"}}}}, chat.GenOptions{}, "has no function name"},
	} {
		_, _, err := r.ReplyMessage(ctx, c.msgs, c.opts, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.msgs, err, c.want)
		}
	}
	if len(*bodies) != 0 {
		t.Errorf("%d requests sent", len(*bodies))
	}

	eng.Err = fmt.Errorf("%w: the model has no chat template to present tools", engine.ErrToolsUnsupported)
	_, _, err := r.ReplyMessage(ctx, []chat.Message{user}, chat.GenOptions{Tools: []byte(weatherTools)}, nil)
	var re *engine.RemoteError
	if !errors.As(err, &re) || re.Status != http.StatusBadRequest || !errors.Is(err, engine.ErrServer) || !strings.Contains(re.Detail, "tool calling is not supported") {
		t.Errorf("a server without tool calling: %v", err)
	}
}
