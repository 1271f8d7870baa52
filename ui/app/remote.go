package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/minfer/minfer/internal/engine"
	"github.com/minfer/minfer/internal/planjson"
	"github.com/minfer/minfer/internal/server"
)

// RemoteInfo is the server the window chats through (instead of a loaded
// model).
type RemoteInfo struct {
	URL    string   // the API base, …/v1
	Model  string   // the model chats use
	Models []string // what the server lists
	Where  string   // for the plan panel
}

// RemoteProblem: connecting to a server failed.
type RemoteProblem struct {
	URL string
	Err error
}

func (RemoteProblem) isProblem() {}

// Remote is the connected server (nil: chats run on a loaded model).
func (c *Controller) Remote() *RemoteInfo { return c.remote }

// Connecting reports a connection attempt in flight.
func (c *Controller) Connecting() bool { return c.connecting }

// ConnectServer chats through the OpenAI-compatible server at url (key and
// model optional). On success the server replaces any loaded model and the
// address is remembered (the key in its own file, never in chats).
func (c *Controller) ConnectServer(url, key, model string) {
	base, err := engine.NormalizeBaseURL(url)
	if err != nil {
		c.problem(RemoteProblem{URL: url, Err: err})
		return
	}
	c.StopServing()
	c.cancelGeneration()
	if c.connecting {
		c.endConnect() // a newer attempt replaces it
	}
	c.connectID++
	c.connecting = true
	c.pendingKey = key
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	c.connectCancel = cancel
	c.worker.send(connectRequest{id: c.connectID, ctx: ctx, url: base, key: key, model: model})
	c.changed(ChangeLoad)
}

func (c *Controller) applyRemote(ev any) {
	switch e := ev.(type) {
	case connectedEvent:
		if e.id != c.connectID {
			return
		}
		key := c.endConnect()
		c.dropLoad()
		c.info, c.view, c.planErr = nil, nil, nil
		c.remote = &RemoteInfo{URL: e.remote.BaseURL, Model: e.remote.Model, Models: e.models, Where: e.remote.Where()}
		c.phase = PhaseReady
		c.PanelExpanded = false
		c.remoteKey = key
		c.addRecentServer(SavedServer{URL: e.remote.BaseURL, Model: e.remote.Model, Key: key})
		c.changed(ChangeModel | ChangePlan | ChangeLoad | ChangeChat | ChangeRecent)
	case connectFailedEvent:
		if e.id != c.connectID {
			return
		}
		c.endConnect()
		c.changed(ChangeLoad)
		c.problem(RemoteProblem{Err: e.err})
	}
}

// endConnect ends the connection attempt in flight and hands back its
// key (kept as remoteKey only once the server answers).
func (c *Controller) endConnect() (key string) {
	key = c.pendingKey
	c.connecting, c.pendingKey = false, ""
	c.connectCancel()
	return key
}

// SetRemoteModel switches the connected server's model (one of those it
// lists); the conversation stays.
func (c *Controller) SetRemoteModel(model string) {
	if c.remote == nil || model == c.remote.Model || c.generating {
		return
	}
	c.ConnectServer(c.remote.URL, c.remoteKey, model)
}

// remoteSummary is the plan panel's line when chats run on a server.
func (c *Controller) remoteSummary() string {
	return "runs on a server: " + c.remote.Where
}

func (c *Controller) remoteReport() string {
	return fmt.Sprintf("Generation runs on the server %s, model %s; nothing is loaded on this computer.\nThe server lists: %s",
		c.remote.URL, c.remote.Model, strings.Join(c.remote.Models, ", "))
}

// ---- saved servers ----

// SavedServer is a server connected to before. The file holding these
// (servers.json in the config folder, readable only by the user) is the
// only place a key is written: chat files name the server, never the key.
type SavedServer struct {
	URL   string `json:"url"`
	Model string `json:"model,omitempty"`
	Key   string `json:"api_key,omitempty"`
}

// ServersPath is the file saved servers (and their keys) live in.
func (c *Controller) ServersPath() string { return filepath.Join(c.configDir, "servers.json") }

// ChatsDir is the folder conversation files live in.
func (c *Controller) ChatsDir() string { return filepath.Join(c.configDir, "chats") }

// RecentServers lists saved servers, most recent first.
func (c *Controller) RecentServers() []SavedServer {
	b, err := os.ReadFile(c.ServersPath())
	if err != nil {
		return nil
	}
	var out []SavedServer
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

func (c *Controller) addRecentServer(s SavedServer) {
	list := recentFirst(s, c.RecentServers(), func(o SavedServer) bool { return o.URL == s.URL })
	b, _ := json.MarshalIndent(list, "", "  ")
	// writeFileAtomic's file is the user's only (0600), as a key needs.
	if err := writeFileAtomic(c.ServersPath(), b); err != nil {
		c.problem(StoreProblem{Err: err})
	}
}

// ---- serving the loaded model ----

// Serving is the API's base URL while the loaded model is served ("" when
// not).
func (c *Controller) Serving() string { return c.serveURL }

// CanServe: a model is loaded on this computer.
func (c *Controller) CanServe() bool { return c.phase == PhaseReady && c.loaded != nil }

// StartServing serves the loaded model on host:port (port 0: any free
// one) with the same safety rules as `minfer serve`. Requests run on the
// window's worker, one at a time with the window's own replies.
func (c *Controller) StartServing(host string, port int, apiKey string) error {
	if !c.CanServe() {
		return errors.New("load a model on this computer first")
	}
	c.StopServing()
	ln, err := server.Listen(host, port, apiKey)
	if err != nil {
		return err
	}
	w := c.worker
	srv := server.New(server.Model{
		ID:  strings.TrimSuffix(filepath.Base(c.loaded.Path), ".gguf"),
		Ctx: c.loaded.NCtx,
		Exec: func(ctx context.Context, fn func(engine.Engine)) error {
			done := make(chan error, 1)
			w.send(execRequest{ctx: ctx, done: done, fn: fn})
			return <-done
		},
		Report: func(e engine.Engine) any {
			if l, ok := e.(*engine.Local); ok {
				return planjson.FromSession(l.Session)
			}
			return nil
		},
	}, server.Config{APIKey: apiKey})
	go srv.Serve(ln)
	c.server = srv
	c.serveURL = baseURL(ln.Addr())
	c.changed(ChangeLoad)
	return nil
}

// StopServing stops the API (requests in flight are cancelled).
func (c *Controller) StopServing() {
	if c.server == nil {
		return
	}
	srv := c.server
	c.server, c.serveURL = nil, ""
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	c.changed(ChangeLoad)
}

func baseURL(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return "http://" + net.JoinHostPort(ta.IP.String(), fmt.Sprint(ta.Port)) + "/v1"
	}
	return "http://" + a.String() + "/v1"
}
