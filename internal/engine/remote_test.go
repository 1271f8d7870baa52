package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine"
	"github.com/minfer/minfer/internal/engine/enginetest"
	"github.com/minfer/minfer/internal/server"
)

// serve serves l with `minfer serve`'s server on a loopback test server.
func serve(t *testing.T, l *engine.Local, cfg server.Config) string {
	t.Helper()
	srv := server.New(server.Model{ID: "stories260K", Ctx: l.CtxLen(),
		Exec: func(_ context.Context, fn func(engine.Engine)) error { fn(l); return nil }}, cfg)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Shutdown(context.Background()) })
	return ts.URL
}

func greedy(n int) chat.GenOptions {
	return chat.GenOptions{Sampler: chat.GreedySamplerSettings(), MaxTokens: n}
}

// The remote engine through `minfer serve` writes what the local engine
// writes, streaming, for chats and raw completions.
func TestRemoteAgainstMinferServe(t *testing.T) {
	local := enginetest.LoadStories(t)
	url := serve(t, local, server.Config{})
	ctx := context.Background()
	r, models, err := engine.Connect(ctx, url, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "stories260K" || len(models) != 1 {
		t.Fatalf("model %q of %v", r.Model, models)
	}
	msgs := []chat.Message{{Role: "user", Content: "Once upon a time"}}
	want, _, err := local.Reply(ctx, msgs, greedy(20), nil)
	if err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	pieces := 0
	got, st, err := r.Reply(ctx, msgs, greedy(20), func(ev chat.Event) { streamed.WriteString(ev.Text); pieces++ })
	if err != nil {
		t.Fatal(err)
	}
	if got != want || streamed.String() != want || pieces < 5 {
		t.Errorf("remote %q (streamed %q in %d pieces), local %q", got, streamed.String(), pieces, want)
	}
	if st.StopReason != chat.StopMaxTokens || st.Generated != 20 || st.PromptTokens == 0 {
		t.Errorf("stats %+v", st)
	}
	wantC, _, _ := local.Complete(ctx, "Lily", greedy(10), nil)
	gotC, st, err := r.Complete(ctx, "Lily", greedy(10), nil)
	if err != nil || gotC != wantC || st.Generated != 10 {
		t.Errorf("completion %q (%v, %+v), local %q", gotC, err, st, wantC)
	}
	// A stop string ends the reply early with "stop".
	word := strings.Fields(want)[2]
	cut, st, err := r.Reply(ctx, msgs, chat.GenOptions{Sampler: chat.GreedySamplerSettings(), MaxTokens: 20, Stop: []string{word}}, nil)
	if err != nil || cut != want[:strings.Index(want, word)] || st.StopReason != chat.StopEOG {
		t.Errorf("stop %q: %q %+v %v", word, cut, st, err)
	}
	// Whole answers (no stream) carry the same text in one piece.
	r.NoStream = true
	pieces = 0
	got, st, err = r.Reply(ctx, msgs, greedy(20), func(chat.Event) { pieces++ })
	if err != nil || got != want || pieces != 1 || st.StopReason != chat.StopMaxTokens || st.Generated != 20 {
		t.Errorf("no stream: %q in %d pieces, %+v %v", got, pieces, st, err)
	}
	gotC, _, err = r.Complete(ctx, "Lily", greedy(10), nil)
	if err != nil || gotC != wantC {
		t.Errorf("no stream completion %q %v", gotC, err)
	}
	if !strings.Contains(r.Where(), url) {
		t.Errorf("Where %q", r.Where())
	}
}

func TestRemoteCancel(t *testing.T) {
	local := enginetest.LoadStories(t)
	url := serve(t, local, server.Config{})
	r, _, err := engine.Connect(context.Background(), url, "", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	text, st, err := r.Reply(ctx, []chat.Message{{Role: "user", Content: "The dog"}}, greedy(200), func(chat.Event) {
		if n++; n == 3 {
			cancel()
		}
	})
	if err != nil || st.StopReason != chat.StopCancelled || text == "" {
		t.Errorf("cancelled reply %q %+v %v", text, st, err)
	}
}

func TestRemoteErrors(t *testing.T) {
	ctx := context.Background()
	// Nothing listens: connection refused.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	_, _, err := engine.Connect(ctx, dead, "", "")
	if !errors.Is(err, engine.ErrUnreachable) || !strings.Contains(err.Error(), dead) {
		t.Errorf("refused: %v", err)
	}
	local := enginetest.LoadStories(t)
	url := serve(t, local, server.Config{APIKey: "right"})
	_, _, err = engine.Connect(ctx, url, "wrong", "")
	var re *engine.RemoteError
	if !errors.Is(err, engine.ErrUnauthorized) || !errors.As(err, &re) || re.Status != 401 {
		t.Errorf("401: %v", err)
	}
	_, _, err = engine.Connect(ctx, url, "right", "gpt-9")
	if !errors.Is(err, engine.ErrModelNotFound) || !strings.Contains(err.Error(), "stories260K") {
		t.Errorf("unknown model: %v", err)
	}
	r, _, err := engine.Connect(ctx, url+"/v1/", "right", "stories260K")
	if err != nil {
		t.Fatal(err)
	}
	// The server refuses the request: its message comes through.
	_, _, err = r.Reply(ctx, []chat.Message{{Role: "user", Content: "hi"}},
		chat.GenOptions{Sampler: chat.SamplerSettings{Temperature: 5, TopP: 1}}, nil)
	if !errors.As(err, &re) || re.Status != 400 || !strings.Contains(err.Error(), "temperature") {
		t.Errorf("400: %v", err)
	}
}

// cutServer streams two pieces of a chat reply, then dies: with the
// connection torn down (hijack) or with a clean end but no finish reason.
func cutServer(t *testing.T, hijack bool) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","created":0,"owned_by":"x"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, piece := range []string{"Hello", " wor"} {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", piece)
		}
		w.(http.Flusher).Flush()
		if hijack {
			time.Sleep(50 * time.Millisecond)
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestRemoteStreamCut(t *testing.T) {
	for _, hijack := range []bool{true, false} {
		t.Run(fmt.Sprintf("hijack=%v", hijack), func(t *testing.T) {
			r, _, err := engine.Connect(context.Background(), cutServer(t, hijack), "", "")
			if err != nil {
				t.Fatal(err)
			}
			var streamed strings.Builder
			text, st, err := r.Reply(context.Background(), []chat.Message{{Role: "user", Content: "hi"}}, greedy(0),
				func(ev chat.Event) { streamed.WriteString(ev.Text) })
			if !errors.Is(err, engine.ErrInterrupted) || text != "Hello wor" || streamed.String() != text || st.StopReason != engine.StopInterrupted {
				t.Errorf("cut stream: %q %q %+v %v", text, streamed.String(), st, err)
			}
		})
	}
}

func TestNormalizeBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080":             "http://127.0.0.1:8080/v1",
		"http://h:1/":                "http://h:1/v1",
		"https://api.example.com/v1": "https://api.example.com/v1",
		" http://h/v1/ ":             "http://h/v1",
	} {
		if got, err := engine.NormalizeBaseURL(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "ftp://h", "  "} {
		if _, err := engine.NormalizeBaseURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
