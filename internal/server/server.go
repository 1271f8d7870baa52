// Package server serves one loaded model on an OpenAI-compatible HTTP API
// (`minfer serve` and the window's "Serve" toggle): GET /v1/models,
// POST /v1/chat/completions, POST /v1/completions, GET /health and
// GET /minfer/plan.
//
// One model, one worker: requests run one at a time in arrival order from
// a bounded queue (full → 429 with Retry-After). A client that goes away
// cancels its generation within one token. Safe by default: see Config
// and CheckBind.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minfer/minfer/internal/engine"
)

// Model is the one model a server serves.
type Model struct {
	// ID is the name /v1/models lists and requests may give as "model".
	ID string
	// Ctx is the context length in tokens (max_tokens is clamped to it).
	Ctx int
	// Exec runs fn with the model's engine on the goroutine that owns the
	// model and returns once fn has returned. An error means fn did not
	// run (e.g. the window's model was unloaded).
	Exec func(ctx context.Context, fn func(engine.Engine)) error
	// Report returns the plan and memory report (any JSON-able value). It
	// is called inside Exec's fn, so it may read the session.
	Report func(engine.Engine) any
}

// Config are the server's safety settings; the zero value is the safe
// default.
type Config struct {
	// APIKey, when set, is required as "Authorization: Bearer KEY" on
	// every /v1 and /minfer request.
	APIKey string
	// AllowedHosts are Host header names accepted besides loopback names
	// and IP literals (DNS-rebinding protection).
	AllowedHosts []string
	// CORSOrigins are the browser origins allowed to call the API ("*"
	// for any). None: no CORS headers at all.
	CORSOrigins []string
	// QueueSize is how many requests may wait behind the running one
	// (default 16).
	QueueSize int
	// MaxBodyBytes limits request bodies (default 4 MiB).
	MaxBodyBytes int64
	// Logf receives one line per request problem (optional).
	Logf func(format string, args ...any)
}

// Defaults.
const (
	DefaultQueueSize    = 16
	DefaultMaxBodyBytes = 4 << 20
	DefaultPort         = 8080
)

// ErrUnsafeBind refuses a non-loopback address without an API key.
var ErrUnsafeBind = errors.New("server: refusing to listen beyond this computer without an API key")

// CheckBind is the start-up rule: a host other than a loopback name or
// address needs an API key, because anyone on the network could
// otherwise use the model.
func CheckBind(host, apiKey string) error {
	if isLoopbackName(host) || apiKey != "" {
		return nil
	}
	return fmt.Errorf("%w: --host %s would let anyone who can reach this computer use the model; "+
		"add --api-key KEY (clients then send \"Authorization: Bearer KEY\") or bind 127.0.0.1", ErrUnsafeBind, host)
}

// Server is one model's API.
type Server struct {
	model Model
	cfg   Config

	jobs    chan *job
	stop    chan struct{}
	stopped sync.Once
	busy    atomic.Bool
	report  atomic.Value // the latest Model.Report result
	created int64

	http    *http.Server
	baseCtx context.Context
	cancel  context.CancelFunc
}

type job struct {
	ctx  context.Context
	fn   func(engine.Engine)
	err  error
	done chan struct{}
}

// New makes a server for m; its worker starts at once.
func New(m Model, cfg Config) *Server {
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	s := &Server{model: m, cfg: cfg, jobs: make(chan *job, cfg.QueueSize), stop: make(chan struct{}), created: time.Now().Unix()}
	s.baseCtx, s.cancel = context.WithCancel(context.Background())
	go s.work()
	return s
}

// work runs queued jobs one at a time, skipping those whose client left.
func (s *Server) work() {
	for {
		select {
		case <-s.stop:
			return
		case j := <-s.jobs:
			s.run(j)
		}
	}
}

func (s *Server) run(j *job) {
	defer close(j.done)
	if err := j.ctx.Err(); err != nil {
		j.err = err
		return
	}
	s.busy.Store(true)
	defer s.busy.Store(false)
	j.err = s.model.Exec(j.ctx, func(e engine.Engine) {
		j.fn(e)
		if s.model.Report != nil {
			s.report.Store(reportBox{s.model.Report(e)})
		}
	})
}

type reportBox struct{ v any }

// errQueueFull is answered with 429.
var errQueueFull = errors.New("server: the request queue is full")

// submit queues fn and waits until it has run (or was skipped). It never
// blocks on a full queue.
func (s *Server) submit(ctx context.Context, fn func(engine.Engine)) error {
	j := &job{ctx: ctx, fn: fn, done: make(chan struct{})}
	select {
	case s.jobs <- j:
	default:
		return errQueueFull
	}
	<-j.done
	return j.err
}

// Refresh takes a fresh plan/memory report through the worker (the
// server does so after every request; call it once after New so
// /minfer/plan has one before the first request).
func (s *Server) Refresh(ctx context.Context) error {
	return s.submit(ctx, func(engine.Engine) {})
}

// Handler is the API with its safety checks, for an http.Server or a test.
func (s *Server) Handler() http.Handler { return s.guard(s.routes()) }

// Serve answers on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.http = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.baseCtx },
	}
	err := s.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown cancels generations in flight, waits (until ctx ends) for
// their handlers to finish, and stops the worker.
func (s *Server) Shutdown(ctx context.Context) error {
	s.cancel()
	var err error
	if s.http != nil {
		err = s.http.Shutdown(ctx)
	}
	s.stopped.Do(func() { close(s.stop) })
	return err
}

// Listen binds host:port after CheckBind. Port 0 picks a free port.
func Listen(host string, port int, apiKey string) (net.Listener, error) {
	if err := CheckBind(host, apiKey); err != nil {
		return nil, err
	}
	return net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(port)))
}
