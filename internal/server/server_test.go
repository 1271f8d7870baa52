package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine"
)

// fakeEngine emits "tok " every tick until ctx ends or n tokens are out,
// recording what it was asked.
type fakeEngine struct {
	mu        sync.Mutex
	n         int
	tick      time.Duration
	gate      chan struct{} // when set, each call waits for a value first
	opts      []chat.GenOptions
	msgs      [][]chat.Message
	afterStop int // tokens emitted after ctx was cancelled
	done      chan struct{}
}

func (f *fakeEngine) gen(ctx context.Context, opts chat.GenOptions, emit func(chat.Event)) (string, chat.Stats, error) {
	f.mu.Lock()
	f.opts = append(f.opts, opts)
	f.mu.Unlock()
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
		}
	}
	defer func() {
		if f.done != nil {
			f.done <- struct{}{}
		}
	}()
	var sb strings.Builder
	st := chat.Stats{PromptTokens: 3}
	for i := 0; f.n == 0 || i < f.n; i++ {
		if ctx.Err() != nil {
			st.StopReason = chat.StopCancelled
			return sb.String(), st, nil
		}
		if opts.MaxTokens > 0 && i >= opts.MaxTokens {
			st.StopReason = chat.StopMaxTokens
			return sb.String(), st, nil
		}
		sb.WriteString("tok ")
		st.Generated++
		if emit != nil {
			emit(chat.Event{Text: "tok "})
		}
		time.Sleep(f.tick)
	}
	st.StopReason = chat.StopEOG
	return sb.String(), st, nil
}

func (f *fakeEngine) Reply(ctx context.Context, msgs []chat.Message, opts chat.GenOptions, emit func(chat.Event)) (string, chat.Stats, error) {
	f.mu.Lock()
	f.msgs = append(f.msgs, msgs)
	f.mu.Unlock()
	return f.gen(ctx, opts, emit)
}

func (f *fakeEngine) Complete(ctx context.Context, p string, opts chat.GenOptions, emit func(chat.Event)) (string, chat.Stats, error) {
	return f.gen(ctx, opts, emit)
}

// ReplyMessage is Reply as an assistant message (no tool calls).
func (f *fakeEngine) ReplyMessage(ctx context.Context, msgs []chat.Message, opts chat.GenOptions, emit func(chat.Event)) (chat.Message, chat.Stats, error) {
	text, st, err := f.Reply(ctx, msgs, opts, emit)
	return chat.Message{Role: "assistant", Content: text}, st, err
}

func (f *fakeEngine) Templated() bool { return true }
func (f *fakeEngine) Reset() error    { return nil }
func (f *fakeEngine) Where() string   { return "fake" }

func newTestServer(t *testing.T, e engine.Engine, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s := New(Model{ID: "fake", Ctx: 512, Exec: func(_ context.Context, fn func(engine.Engine)) error { fn(e); return nil },
		Report: func(engine.Engine) any { return map[string]int{"ctx": 512} }}, cfg)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		s.Shutdown(context.Background())
	})
	return s, ts
}

func do(t *testing.T, method, url, body string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// wantError checks the status and OpenAI's error shape.
func wantError(t *testing.T, resp *http.Response, body []byte, status int) errorDetail {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	var e struct {
		Error *errorDetail `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("not OpenAI's error shape: %s (%v)", body, err)
	}
	return *e.Error
}

func TestCheckBind(t *testing.T) {
	for _, h := range []string{"127.0.0.1", "localhost", "::1", "127.0.0.2"} {
		if err := CheckBind(h, ""); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	for _, h := range []string{"0.0.0.0", "::", "192.168.1.5", "myhost.example"} {
		err := CheckBind(h, "")
		if !errors.Is(err, ErrUnsafeBind) || !strings.Contains(err.Error(), "--api-key") {
			t.Errorf("%s without a key: %v", h, err)
		}
		if err := CheckBind(h, "k"); err != nil {
			t.Errorf("%s with a key: %v", h, err)
		}
	}
	if _, err := Listen("0.0.0.0", 0, ""); !errors.Is(err, ErrUnsafeBind) {
		t.Errorf("Listen 0.0.0.0 without a key: %v", err)
	}
}

func TestHostHeader(t *testing.T) {
	_, ts := newTestServer(t, &fakeEngine{n: 1}, Config{AllowedHosts: []string{"box.lan"}})
	for host, want := range map[string]int{
		"evil.example":       403,
		"evil.example:8080":  403,
		"localhost:8080":     200,
		"127.0.0.1:1":        200,
		"[::1]:8080":         200,
		"192.168.0.7:8080":   200,
		"box.lan:8080":       200,
		"localhost.evil.com": 403,
	} {
		resp, body := do(t, "GET", ts.URL+"/v1/models", "", map[string]string{"Host": host})
		if want == 403 {
			wantError(t, resp, body, 403)
		} else if resp.StatusCode != want {
			t.Errorf("Host %s: %d %s", host, resp.StatusCode, body)
		}
	}
}

func TestAPIKey(t *testing.T) {
	_, ts := newTestServer(t, &fakeEngine{n: 1}, Config{APIKey: "sekret"})
	resp, body := do(t, "GET", ts.URL+"/v1/models", "", nil)
	if e := wantError(t, resp, body, 401); e.Code == nil || *e.Code != "invalid_api_key" {
		t.Errorf("code %v", e.Code)
	}
	resp, body = do(t, "GET", ts.URL+"/v1/models", "", map[string]string{"Authorization": "Bearer wrong"})
	wantError(t, resp, body, 401)
	resp, body = do(t, "GET", ts.URL+"/minfer/plan", "", nil)
	wantError(t, resp, body, 401)
	if resp, body := do(t, "GET", ts.URL+"/v1/models", "", map[string]string{"Authorization": "Bearer sekret"}); resp.StatusCode != 200 {
		t.Errorf("right key: %d %s", resp.StatusCode, body)
	}
	if resp, _ := do(t, "GET", ts.URL+"/health", "", nil); resp.StatusCode != 200 {
		t.Errorf("/health needs no key: %d", resp.StatusCode)
	}
}

func TestCORS(t *testing.T) {
	_, ts := newTestServer(t, &fakeEngine{n: 1}, Config{})
	resp, _ := do(t, "GET", ts.URL+"/v1/models", "", map[string]string{"Origin": "http://evil.example"})
	if h := resp.Header.Get("Access-Control-Allow-Origin"); h != "" {
		t.Errorf("CORS header without configuration: %q", h)
	}
	_, ts = newTestServer(t, &fakeEngine{n: 1}, Config{CORSOrigins: []string{"http://app.example"}})
	resp, _ = do(t, "OPTIONS", ts.URL+"/v1/chat/completions", "", map[string]string{"Origin": "http://app.example"})
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "http://app.example" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = do(t, "GET", ts.URL+"/v1/models", "", map[string]string{"Origin": "http://other.example"})
	if h := resp.Header.Get("Access-Control-Allow-Origin"); h != "" {
		t.Errorf("CORS header for an origin not configured: %q", h)
	}
}

func TestBadRequests(t *testing.T) {
	_, ts := newTestServer(t, &fakeEngine{n: 2}, Config{MaxBodyBytes: 1 << 10})
	chatURL, textURL := ts.URL+"/v1/chat/completions", ts.URL+"/v1/completions"
	for _, c := range []struct {
		name, url, body string
		status          int
		param           string
	}{
		{"bad json", chatURL, `{"messages": [`, 400, ""},
		{"empty", chatURL, ``, 400, ""},
		{"array body", chatURL, `[1,2]`, 400, ""},
		{"two values", chatURL, `{} {}`, 400, ""},
		{"messages wrong type", chatURL, `{"messages":"hi"}`, 400, "messages"},
		{"temperature string", chatURL, `{"messages":[{"role":"user","content":"hi"}],"temperature":"hot"}`, 400, "temperature"},
		{"max_tokens float", chatURL, `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1.5}`, 400, "max_tokens"},
		{"temperature range", chatURL, `{"messages":[{"role":"user","content":"hi"}],"temperature":3}`, 400, "temperature"},
		{"top_p range", chatURL, `{"messages":[{"role":"user","content":"hi"}],"top_p":-1}`, 400, "top_p"},
		{"max_tokens zero", chatURL, `{"messages":[{"role":"user","content":"hi"}],"max_tokens":0}`, 400, "max_tokens"},
		{"n", chatURL, `{"messages":[{"role":"user","content":"hi"}],"n":2}`, 400, "n"},
		{"no messages", chatURL, `{"messages":[]}`, 400, "messages"},
		{"no role", chatURL, `{"messages":[{"content":"hi"}]}`, 400, "messages[0].role"},
		{"bad role", chatURL, `{"messages":[{"role":"wizard","content":"hi"}]}`, 400, "messages[0].role"},
		{"image part", chatURL, `{"messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, 400, ""},
		{"stop type", chatURL, `{"messages":[{"role":"user","content":"hi"}],"stop":5}`, 400, ""},
		{"empty stop", chatURL, `{"messages":[{"role":"user","content":"hi"}],"stop":[""]}`, 400, "stop"},
		{"huge", chatURL, `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 2<<10) + `"}]}`, 413, ""},
		{"prompt type", textURL, `{"prompt":3}`, 400, "prompt"},
		{"no prompt", textURL, `{}`, 400, "prompt"},
		{"token prompt", textURL, `{"prompt":[1,2,3]}`, 400, "prompt"},
		{"echo", textURL, `{"prompt":"a","echo":true}`, 400, "echo"},
		{"unknown model", chatURL, `{"model":"gpt-9","messages":[{"role":"user","content":"hi"}]}`, 404, "model"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := do(t, "POST", c.url, c.body, nil)
			e := wantError(t, resp, body, c.status)
			if c.param != "" && (e.Param == nil || *e.Param != c.param) {
				t.Errorf("param %v, want %q (%s)", e.Param, c.param, e.Message)
			}
		})
	}
	resp, body := do(t, "GET", chatURL, "", nil)
	wantError(t, resp, body, 405)
	resp, body = do(t, "GET", ts.URL+"/v2/nothing", "", nil)
	wantError(t, resp, body, 404)
	resp, body = do(t, "GET", ts.URL+"/v1/models/gpt-9", "", nil)
	wantError(t, resp, body, 404)
}

func TestMaxTokensClampedAndOptions(t *testing.T) {
	f := &fakeEngine{n: 1}
	_, ts := newTestServer(t, f, Config{})
	resp, body := do(t, "POST", ts.URL+"/v1/chat/completions",
		`{"model":"fake","messages":[{"role":"developer","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi"}]}],`+
			`"max_tokens":1000000,"temperature":0,"top_p":0.5,"seed":7,"presence_penalty":1,"frequency_penalty":-1,"stop":"x"}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	o := f.opts[0]
	if o.MaxTokens != 512 || o.Sampler.Temperature != 0 || o.Sampler.TopP != 0.5 || o.Sampler.Seed != 7 ||
		o.Sampler.PresencePenalty != 1 || o.Sampler.FrequencyPenalty != -1 || len(o.Stop) != 1 || o.Stop[0] != "x" {
		t.Errorf("options %+v", o)
	}
	if m := f.msgs[0]; len(m) != 2 || m[0].Role != "system" || m[1].Content != "hi" {
		t.Errorf("messages %+v", m)
	}
	var out chatCompletion
	json.Unmarshal(body, &out)
	if out.Object != "chat.completion" || out.Choices[0].Message.Content != "tok " || *out.Choices[0].FinishReason != "stop" ||
		out.Usage.PromptTokens != 3 || out.Usage.CompletionTokens != 1 || out.Usage.TotalTokens != 4 {
		t.Errorf("answer %s", body)
	}
}

func TestQueueFull(t *testing.T) {
	f := &fakeEngine{n: 1, gate: make(chan struct{})}
	s, ts := newTestServer(t, f, Config{QueueSize: 2})
	req := `{"messages":[{"role":"user","content":"hi"}]}`
	type result struct {
		status int
		retry  string
	}
	results := make(chan result, 4)
	for i := 0; i < 3; i++ {
		go func() {
			resp, _ := do(t, "POST", ts.URL+"/v1/chat/completions", req, nil)
			results <- result{resp.StatusCode, resp.Header.Get("Retry-After")}
		}()
	}
	// One runs (held at the gate), two wait: the queue is full.
	for deadline := time.Now().Add(10 * time.Second); !(s.busy.Load() && len(s.jobs) == 2); {
		if time.Now().After(deadline) {
			t.Fatalf("busy %v queued %d", s.busy.Load(), len(s.jobs))
		}
		time.Sleep(5 * time.Millisecond)
	}
	resp, body := do(t, "POST", ts.URL+"/v1/chat/completions", req, nil)
	wantError(t, resp, body, 429)
	if resp.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	for i := 0; i < 3; i++ {
		f.gate <- struct{}{}
	}
	for i := 0; i < 3; i++ {
		if r := <-results; r.status != 200 {
			t.Errorf("queued request: %d", r.status)
		}
	}
}

// A client that disconnects mid-stream cancels its generation: the
// engine sees the cancelled context at its next token, and the next
// request is served.
func TestDisconnectCancels(t *testing.T) {
	f := &fakeEngine{tick: 5 * time.Millisecond, done: make(chan struct{}, 4)}
	_, ts := newTestServer(t, f, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(resp.Body)
	for i := 0; i < 3; i++ { // role chunk, two tokens
		if _, err := rd.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	resp.Body.Close()
	select {
	case <-f.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the generation did not stop after the client left")
	}
	f.n = 2
	resp2, body := do(t, "POST", ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`, nil)
	if resp2.StatusCode != 200 || !strings.Contains(string(body), "tok tok ") {
		t.Errorf("next request: %d %s", resp2.StatusCode, body)
	}
}

func TestStreamShape(t *testing.T) {
	_, ts := newTestServer(t, &fakeEngine{n: 3}, Config{})
	resp, body := do(t, "POST", ts.URL+"/v1/completions", `{"prompt":"a","stream":true,"max_tokens":2,"stream_options":{"include_usage":true}}`, nil)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := strings.Split(strings.TrimSpace(string(body)), "\n\n")
	if events[len(events)-1] != "data: [DONE]" {
		t.Fatalf("last event %q", events[len(events)-1])
	}
	var text strings.Builder
	finish := ""
	var u *usage
	for _, ev := range events[:len(events)-1] {
		var c textCompletion
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &c); err != nil {
			t.Fatalf("%q: %v", ev, err)
		}
		for _, ch := range c.Choices {
			text.WriteString(ch.Text)
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
		if c.Usage != nil {
			u = c.Usage
		}
	}
	if text.String() != "tok tok " || finish != "length" || u == nil || u.CompletionTokens != 2 {
		t.Errorf("text %q finish %q usage %+v", text.String(), finish, u)
	}
	resp, body = do(t, "GET", ts.URL+"/minfer/plan", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"ctx":512`) {
		t.Errorf("plan: %d %s", resp.StatusCode, body)
	}
}
