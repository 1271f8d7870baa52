package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/engine"
)

// The worker is the only goroutine that touches a loaded model (docs/architecture.md,
// Concurrency). The controller sends it requests; it answers with events.
// Cancellation is the request's context, so a busy worker can be stopped
// without reading its queue.

type loadRequest struct {
	id   int
	ctx  context.Context
	path string
	opts core.LoadOptions
}

type generateRequest struct {
	id  int
	ctx context.Context
	// msgs is the conversation for templated models; prompt is the raw
	// text for models without a template (plain completion).
	msgs     []chat.Message
	prompt   string
	complete bool
	opts     chat.GenOptions
	// useBuiltin, when set, replaces the model's chat template with the
	// built-in template of that family before generating.
	useBuiltin string
}

type unloadRequest struct{}

type closeRequest struct{ done chan struct{} }

type progressEvent struct {
	id          int
	done, total int64
}

type loadedEvent struct {
	id       int
	report   offload.Report
	memory   []alloc.MemoryReport
	nCtx     int
	template bool
	source   chat.Source
}

type loadFailedEvent struct {
	id  int
	err error
}

// logEvent carries a once-only warning from the load (core's Logf).
type logEvent struct {
	id   int
	text string
}

type tokenEvent struct {
	id   int
	text string
}

type replyEvent struct {
	id     int
	text   string
	calls  []chat.ToolCall // the reply's tool calls (a server's or a local model's)
	stats  chat.Stats
	err    error
	cached int // tokens in the KV cache after the reply
	nCtx   int
}

// worker owns one session at a time.
type worker struct {
	requests chan any
	events   chan any
	load     func(ctx context.Context, path string, opts core.LoadOptions, progress core.Progress) (*core.Session, error)
	// tokenHook: Config.TokenHook (nil: none).
	tokenHook func(context.Context)

	session *core.Session
	local   *engine.Local // the loaded model's engine (nil when none)
	// eng is what chats run on: local, or a server connected to.
	eng engine.Engine
}

func startWorker() *worker {
	w := &worker{requests: make(chan any, 16), events: make(chan any, 256), load: core.Load}
	go w.run()
	return w
}

func (w *worker) send(req any) { w.requests <- req }

// close ends the worker after the request in flight (whose context the
// caller has cancelled), freeing the model. It gives up waiting after
// closeWait: the process is exiting anyway and must not hang on it.
func (w *worker) close() {
	done := make(chan struct{})
	select {
	case w.requests <- closeRequest{done: done}:
	case <-time.After(closeWait):
		return
	}
	select {
	case <-done:
	case <-time.After(closeWait):
	}
}

const closeWait = 10 * time.Second

func (w *worker) run() {
	for req := range w.requests {
		switch r := req.(type) {
		case loadRequest:
			w.doLoad(r)
		case generateRequest:
			w.doGenerate(r)
		case unloadRequest:
			w.unload()
		case connectRequest:
			w.doConnect(r)
		case execRequest:
			w.doExec(r)
		case closeRequest:
			w.unload()
			close(w.events)
			close(r.done)
			return
		}
	}
}

func (w *worker) unload() {
	if w.session != nil {
		w.session.Close()
	}
	w.session, w.local, w.eng = nil, nil, nil
}

func (w *worker) doLoad(r loadRequest) {
	// A reload replaces the model: free the old one first so both never
	// hold memory at once.
	w.unload()
	if err := r.ctx.Err(); err != nil {
		w.events <- loadFailedEvent{id: r.id, err: err}
		return
	}
	lastPercent := -1
	progress := func(done, total int64) {
		// At most one event per percent: the bridge coalesces further.
		p := 100
		if total > 0 {
			p = int(done * 100 / total)
		}
		if p != lastPercent {
			lastPercent = p
			w.events <- progressEvent{id: r.id, done: done, total: total}
		}
	}
	r.opts.Logf = func(format string, args ...any) {
		w.events <- logEvent{id: r.id, text: fmt.Sprintf(format, args...)}
	}
	s, err := w.load(r.ctx, r.path, r.opts, progress)
	if err != nil {
		w.events <- loadFailedEvent{id: r.id, err: err}
		return
	}
	local, err := engine.NewLocal(s)
	if err != nil {
		s.Close()
		w.events <- loadFailedEvent{id: r.id, err: fmt.Errorf("loaded, but the chat cannot start: %w", err)}
		return
	}
	// The window asks before it swaps a failing template for the built-in.
	local.AskBeforeFallback = true
	w.session, w.local, w.eng = s, local, local
	w.events <- loadedEvent{id: r.id, report: s.OffloadReport(), memory: s.MemoryReport(), nCtx: s.NCtxLen(),
		template: local.Templated(), source: local.Source}
}

// errNotLoaded answers a generate request that arrives without a model.
var errNotLoaded = errors.New("no model is loaded")

func (w *worker) doGenerate(r generateRequest) {
	if w.eng == nil {
		w.events <- replyEvent{id: r.id, err: errNotLoaded}
		return
	}
	emit := func(ev chat.Event) {
		if ev.Text != "" {
			w.events <- tokenEvent{id: r.id, text: ev.Text}
			if w.tokenHook != nil {
				w.tokenHook(r.ctx)
			}
		}
	}
	var (
		text  string
		calls []chat.ToolCall
		st    chat.Stats
		err   error
	)
	if r.useBuiltin != "" {
		if w.local == nil {
			w.events <- replyEvent{id: r.id, err: errors.New("a built-in template applies to a loaded model, not a server")}
			return
		}
		if err := w.local.Conv.UseBuiltin(r.useBuiltin); err != nil {
			w.events <- replyEvent{id: r.id, err: err}
			return
		}
	}
	if r.complete {
		text, st, err = w.eng.Complete(r.ctx, r.prompt, r.opts, emit)
	} else {
		// (A template that refuses a system role gets it folded into the
		// first user turn inside Conversation.Prompt.)
		// ReplyMessage: a conversation's tool calls and results go to
		// the engine as such, and the reply's calls come back the same
		// way from a loaded model and from a server.
		var m chat.Message
		m, st, err = w.eng.ReplyMessage(r.ctx, r.msgs, r.opts, emit)
		text, calls = m.Content, m.ToolCalls
	}
	ev := replyEvent{id: r.id, text: text, calls: calls, stats: st, err: err}
	if w.local != nil {
		ev.cached, ev.nCtx = w.local.Conv.CachedTokens(), w.session.NCtxLen()
		if errors.Is(err, core.ErrModelFileChanged) {
			// The session cannot read its weights any more: free it now.
			w.unload()
		}
	}
	w.events <- ev
}

// connectRequest asks to chat through an OpenAI-compatible server.
type connectRequest struct {
	id              int
	ctx             context.Context
	url, key, model string
}

type connectedEvent struct {
	id     int
	remote *engine.Remote
	models []string
}

type connectFailedEvent struct {
	id  int
	err error
}

// doConnect lists the server's models; on success the server replaces any
// loaded model (one engine at a time).
func (w *worker) doConnect(r connectRequest) {
	rem, models, err := engine.Connect(r.ctx, r.url, r.key, r.model)
	if err != nil {
		w.events <- connectFailedEvent{id: r.id, err: err}
		return
	}
	w.unload()
	w.eng = rem
	w.events <- connectedEvent{id: r.id, remote: rem, models: models}
}

// execRequest runs fn on the worker with the loaded model (the API server
// serving the window's model goes through here, so the model keeps one
// owner).
type execRequest struct {
	ctx  context.Context
	fn   func(engine.Engine) // given the loaded model's *engine.Local
	done chan error
}

func (w *worker) doExec(r execRequest) {
	switch {
	case r.ctx.Err() != nil:
		r.done <- r.ctx.Err()
	case w.local == nil:
		r.done <- errNotLoaded
	default:
		r.fn(w.local)
		r.done <- nil
	}
}
