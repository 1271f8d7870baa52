package cli

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/minfer/minfer/internal/engine"
	"github.com/minfer/minfer/internal/engine/enginetest"
	"github.com/minfer/minfer/internal/ggtest"
	"github.com/minfer/minfer/internal/server"
)

func TestServeRefusesOpenHostWithoutKey(t *testing.T) {
	var out, errb bytes.Buffer
	code := runCLI(&out, &errb, "serve", "-m", ggtest.Path(t, "models", "stories260K.gguf"), "--host", "0.0.0.0")
	if code != 1 || !strings.Contains(errb.String(), "--api-key") || !strings.Contains(errb.String(), "anyone") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}

// serveStories serves stories260K in-process as `minfer serve` does.
func serveStories(t *testing.T) string {
	t.Helper()
	l := enginetest.LoadStories(t)
	srv := server.New(server.Model{ID: "stories260K", Ctx: l.CtxLen(),
		Exec: func(_ context.Context, fn func(engine.Engine)) error { fn(l); return nil }}, server.Config{})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Shutdown(context.Background()) })
	return ts.URL
}

// `minfer chat --remote` against `minfer serve`, streamed and not, prints
// what `minfer run` prints for the same text locally.
func TestChatRemote(t *testing.T) {
	url := serveStories(t)
	var want, errb bytes.Buffer
	if code := runCLI(&want, &errb, "run", "-m", ggtest.Path(t, "models", "stories260K.gguf"), "-p", "Once upon a time", "-n", "16", "--temp", "0"); code != 0 {
		t.Fatalf("run: %s", errb.String())
	}
	for _, extra := range [][]string{nil, {"--no-stream"}} {
		var out, errb bytes.Buffer
		e := Env{Stdin: strings.NewReader("Once upon a time\n/exit\n"), Stdout: &out, Stderr: &errb, LookupEnv: func(string) (string, bool) { return "", false }}
		args := append([]string{"chat", "--remote", url, "--temp", "0", "-n", "16"}, extra...)
		if code := Main(e, args); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		if !strings.Contains(out.String(), strings.TrimSpace(want.String())) {
			t.Errorf("%v: got %q, want it to hold %q", args, out.String(), want.String())
		}
		if !strings.Contains(errb.String(), "stories260K") || !strings.Contains(errb.String(), "max tokens") {
			t.Errorf("%v: stderr %q", args, errb.String())
		}
	}
}

func TestChatRemoteErrors(t *testing.T) {
	var out, errb bytes.Buffer
	e := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, LookupEnv: func(string) (string, bool) { return "", false }}
	if code := Main(e, []string{"chat", "--remote", "http://127.0.0.1:1"}); code != 1 || !strings.Contains(errb.String(), "cannot reach the server") {
		t.Errorf("refused: %d %s", code, errb.String())
	}
	errb.Reset()
	if code := Main(e, []string{"chat", "--remote", "http://x", "-m", "f.gguf"}); code != 2 {
		t.Errorf("both: %d %s", code, errb.String())
	}
	// A server that dies mid-reply: the text so far is printed and kept.
	ts := enginetest.CutStreamServer(t)
	out.Reset()
	errb.Reset()
	e.Stdin = strings.NewReader("hi\n/exit\n")
	if code := Main(e, []string{"chat", "--remote", ts.URL}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "Half a sto") || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("cut: out %q err %q", out.String(), errb.String())
	}
}
