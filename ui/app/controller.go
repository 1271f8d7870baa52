// Package app is the window's state and logic in plain Go: the Controller
// (open → plan → load → chat), the worker goroutine that owns the loaded
// model, the bridge that moves its events onto the UI goroutine, the
// conversation store and the texts the window shows. No widget lives here
// and nothing imports Fyne, so all of it builds and tests without cgo; the
// ui package draws it.
package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/internal/server"
)

// Controller holds the window's state. It is used from one goroutine only
// (the UI's); the worker's answers reach it through Config.Post.
type Controller struct {
	// switchTemplate is the built-in family the next reply switches the
	// loaded model to (UseBuiltinTemplate); "" keeps the template.
	switchTemplate string
	cfg            Config
	configDir      string
	store          *ChatStore
	worker         *worker
	post           func(func())

	// OnChange and OnProblem are the view's hooks (called on the UI goroutine).
	OnChange  func(Change)
	OnProblem func(Problem)

	// model and plan
	info      *core.ModelInfo
	device    devices.DeviceMemory
	auto      bool
	layers    int // the slider's count when !auto
	ctxLen    int
	budgetMiB int // "Set a budget…" (MINFER_GPU_MEM semantics); 0: none
	view      *core.PlanView
	planErr   error

	// load
	phase         Phase
	loadID        int
	loadCancel    context.CancelFunc
	progressDone  int64
	progressTotal int64
	loaded        *LoadedModel
	loadingPlan   offload.Plan // the plan of the load in flight
	loadLog       []string
	// PanelExpanded: in Ready the offload panel is one line unless expanded.
	PanelExpanded bool

	// chat
	chat       *Chat
	chats      []ChatSummary
	sampling   Sampling
	genID      int
	genChat    *Chat
	genCancel  context.CancelFunc
	generating bool
	// systemDirty: the system prompt changed since the chat was saved.
	systemDirty bool

	// remote: chats run on a server (remote.go)
	remote        *RemoteInfo
	connecting    bool
	connectID     int
	connectCancel context.CancelFunc
	pendingKey    string
	remoteKey     string // kept in memory to switch models; saved only in servers.json
	// serving the loaded model on the API (serve.go)
	server   *server.Server
	serveURL string
}

// NewController opens the conversation store and starts the model worker.
func NewController(cfg Config) (*Controller, error) {
	dir, err := ResolveConfigDir(cfg.ConfigDir)
	if err != nil {
		return nil, err
	}
	store, err := NewChatStore(filepath.Join(dir, "chats"))
	if err != nil {
		return nil, err
	}
	if cfg.Device == nil {
		cfg.Device = devices.QueryGPU
	}
	if cfg.Env == nil {
		cfg.Env = os.LookupEnv
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Interval <= 0 {
		cfg.Interval = streamInterval
	}
	if cfg.Post == nil {
		return nil, errors.New("ui: Config.Post is required (it moves worker events onto the UI goroutine)")
	}
	c := &Controller{cfg: cfg, configDir: dir, store: store, post: cfg.Post, sampling: DefaultSampling(), auto: true}
	store.now = cfg.Now
	c.chat = c.newChat()
	c.loadSampling()
	c.worker = startWorker()
	c.worker.tokenHook = cfg.TokenHook
	if cfg.Load != nil {
		c.worker.load = cfg.Load
	}
	go pump(c.worker.events, c.post, c.apply, cfg.Interval)
	return c, nil
}

// Start lists the saved conversations and reports damaged ones. Call it
// once the view's hooks are set.
func (c *Controller) Start() {
	c.refreshChats()
}

// Close stops any work and frees the model.
func (c *Controller) Close() {
	c.StopServing()
	c.saveIfEdited()
	c.cancelGeneration()
	if c.loadCancel != nil {
		c.loadCancel()
	}
	if c.connecting {
		c.endConnect()
	}
	c.worker.close()
}

func (c *Controller) changed(ch Change) {
	if c.OnChange != nil {
		c.OnChange(ch)
	}
}

func (c *Controller) problem(p Problem) {
	if c.OnProblem != nil {
		c.OnProblem(p)
	}
}
