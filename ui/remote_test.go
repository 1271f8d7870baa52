//go:build !nogui

package ui

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/internal/engine"
	"github.com/minfer/minfer/internal/engine/enginetest"
	"github.com/minfer/minfer/internal/server"
	"github.com/minfer/minfer/ui/app"
)

// minferServe serves stories260K in-process as `minfer serve` does and
// returns its address and the local engine (for expected texts).
func minferServe(t *testing.T, key string) (string, *engine.Local) {
	t.Helper()
	o := core.LoadOptions{Threads: 1, PlanOptions: core.PlanOptions{Ctx: 256,
		Device: func() devices.DeviceMemory { return devices.NoDevice{Reason: "test"} }, Env: noEnv}}
	s, err := core.Load(context.Background(), stories(t), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	l, err := engine.NewLocal(s)
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Model{ID: "stories260K", Ctx: s.NCtxLen(),
		Exec: func(_ context.Context, fn func(engine.Engine)) error { fn(l); return nil }}, server.Config{APIKey: key})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Shutdown(context.Background()) })
	return ts.URL, l
}

// connect fills in the window's "Connect to a server" dialog and waits.
func connect(h *harness, url, key string) {
	h.t.Helper()
	test.Tap(h.v.connectBtn)
	d := h.dialog("connect")
	d.entries["url"].SetText(url)
	d.entries["key"].SetText(key)
	test.Tap(d.button("Connect"))
	h.waitFor("the connection", func() bool { return !h.v.c.Connecting() })
}

func greedyUI(n int) func(*app.Config) {
	return withSampling(app.Sampling{Sampler: chat.SamplerSettings{Temperature: 0, TopK: 0, Seed: 1}, MaxTokens: n})
}

// The window chats through `minfer serve`: streaming, regenerate, edit and
// the plan panel saying where it runs; the key stays out of chat files.
func TestWindowRemoteChat(t *testing.T) {
	url, local := minferServe(t, "sekret-key")
	want, _, err := local.Reply(context.Background(), []chat.Message{{Role: "user", Content: "Once upon a time"}},
		chat.GenOptions{Sampler: chat.GreedySamplerSettings(), MaxTokens: 16}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, bigGPU, greedyUI(16))
	v := h.v
	connect(h, url, "sekret-key")
	r := v.c.Remote()
	if r == nil || r.Model != "stories260K" || v.c.Phase() != app.PhaseReady {
		t.Fatalf("not connected: %+v phase %v dialog %v", r, v.c.Phase(), v.dlg)
	}
	mustContain(t, "model label", v.modelLabel.Text, "server", url, "stories260K")
	mustContain(t, "plan panel", v.remoteText.Text, "runs on a server", url+"/v1", "nothing is loaded on this computer")
	if v.panelHolder.Objects[0] != v.remotePanel || len(v.remoteModel.Options) != 1 || v.remoteModel.Selected != "stories260K" {
		t.Errorf("the panel should list the server's models: %v (%q)", v.remoteModel.Options, v.remoteModel.Selected)
	}
	if v.serveRow.Visible() {
		t.Errorf("a remote model cannot be served again from here")
	}

	reply := sendAndWait(h, "Once upon a time")
	if reply.Content != want {
		t.Errorf("remote reply %q, want %q", reply.Content, want)
	}
	// At least one refresh showed a partial reply (how many depends on the
	// machine's speed against the 5 ms refresh interval).
	if len(h.streamed) == 0 {
		t.Errorf("the reply did not stream: no partial refresh")
	}
	if reply.Stats == nil || reply.Stats.Generated != 16 || reply.Note != "stopped at the 16-token limit (sampling settings)" {
		t.Errorf("stats %+v note %q", reply.Stats, reply.Note)
	}

	test.Tap(v.msgViews[1].regenBtn)
	h.waitFor("the regenerated reply", func() bool { return !v.c.Generating() })
	if msgs := v.c.Chat().Messages; len(msgs) != 2 || msgs[1].Content != want {
		t.Errorf("regenerated: %+v", msgs)
	}
	test.Tap(v.msgViews[0].editBtn)
	v.input.SetText("A cat sat")
	v.input.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	h.waitFor("the edited reply", func() bool { return !v.c.Generating() })
	wantEdit, _, _ := local.Reply(context.Background(), []chat.Message{{Role: "user", Content: "A cat sat"}},
		chat.GenOptions{Sampler: chat.GreedySamplerSettings(), MaxTokens: 16}, nil)
	if msgs := v.c.Chat().Messages; len(msgs) != 2 || msgs[0].Content != "A cat sat" || msgs[1].Content != wantEdit {
		t.Errorf("edited: %+v, want reply %q", msgs, wantEdit)
	}

	// The key is saved with the server list, readable only by the user,
	// and in no chat file.
	saved := v.c.RecentServers()
	if len(saved) != 1 || saved[0].Key != "sekret-key" || !strings.HasPrefix(saved[0].URL, url) {
		t.Errorf("saved servers %+v", saved)
	}
	if fi, err := os.Stat(v.c.ServersPath()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("servers.json: %v %v", fi, err)
	}
	files, _ := filepath.Glob(filepath.Join(v.c.ChatsDir(), "*"))
	if len(files) == 0 {
		t.Fatal("no chat saved")
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), "sekret-key") {
			t.Errorf("%s holds the API key", f)
		}
	}
	// The dialog offers the last server again.
	test.Tap(v.connectBtn)
	if d := h.dialog("connect"); d.entries["url"].Text != saved[0].URL {
		t.Errorf("connect dialog prefilled with %q", d.entries["url"].Text)
	}
}

func TestWindowRemoteErrors(t *testing.T) {
	h := newHarness(t, bigGPU)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	connect(h, dead, "")
	mustContain(t, "dialog", h.dialog("remote").text.Text, "cannot reach the server", dead)
	if h.v.c.Remote() != nil {
		t.Errorf("connected to nothing")
	}
	url, _ := minferServe(t, "right")
	connect(h, url, "wrong")
	mustContain(t, "dialog", h.dialog("remote").text.Text, "refused the API key", "401")
}

// A server that dies mid-reply: the text so far stays, marked interrupted.
func TestWindowRemoteStreamCut(t *testing.T) {
	ts := enginetest.CutStreamServer(t)
	h := newHarness(t, bigGPU)
	connect(h, ts.URL, "")
	reply := sendAndWait(h, "hi")
	if reply.Content != "Half a sto" || !strings.HasPrefix(reply.Note, "interrupted") {
		t.Errorf("cut reply %q note %q", reply.Content, reply.Note)
	}
}

// The window serves its loaded model on the API; opening another model
// stops it.
func TestWindowServesTheLoadedModel(t *testing.T) {
	h := newHarness(t, bigGPU, greedyUI(16))
	v := h.v
	if v.serveRow.Visible() {
		t.Errorf("nothing to serve before a load")
	}
	h.drop(stories(t))
	h.load()
	if !v.serveRow.Visible() {
		t.Fatal("the serve toggle is hidden with a model loaded")
	}
	v.serveCheck.SetChecked(true)
	d := h.dialog("serve")
	d.entries["host"].SetText("0.0.0.0")
	test.Tap(d.button("Serve"))
	mustContain(t, "refusal", h.dialog("serve").errText.Text, "--api-key")
	d = h.dialog("serve")
	d.entries["host"].SetText("127.0.0.1")
	d.entries["port"].SetText("0")
	test.Tap(d.button("Serve"))
	u := v.c.Serving()
	if u == "" || v.serveAddr.Text != u || !v.serveCheck.Checked {
		t.Fatalf("serving %q, shown %q", u, v.serveAddr.Text)
	}
	test.Tap(v.copyBtn)
	if h.app.Clipboard().Content() != u {
		t.Errorf("copy gave %q", h.app.Clipboard().Content())
	}
	resp, err := http.Post(u+"/completions", "application/json", strings.NewReader(`{"prompt":"Once upon a time","max_tokens":8,"temperature":0}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"completion_tokens":8`) {
		t.Errorf("served completion: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(u[:len(u)-3] + "/minfer/plan")
	if err == nil {
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err != nil || !strings.Contains(string(body), `"memory"`) {
		t.Errorf("plan: %v %s", err, body)
	}
	// The window's own chat still works while serving.
	if r := sendAndWait(h, "Once upon a time"); strings.TrimSpace(r.Content) == "" {
		t.Errorf("chat while serving: %+v", r)
	}
	v.serveCheck.SetChecked(false)
	if v.c.Serving() != "" {
		t.Fatal("still serving after the toggle")
	}
	if _, err := http.Get(u + "/models"); err == nil {
		t.Errorf("the API still answers after stopping")
	}
}
