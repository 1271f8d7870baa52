package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine"
)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /v1/models/{id...}", s.modelByID)
	mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	mux.HandleFunc("POST /v1/completions", s.completions)
	mux.HandleFunc("GET /minfer/plan", s.plan)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// A known path with the wrong method is a 405, anything else a 404.
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, p := mux.Handler(probe); p != "/" {
				w.Header().Set("Allow", m)
				s.fail(w, r, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed",
					fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, m))
				return
			}
		}
		s.fail(w, r, http.StatusNotFound, "invalid_request_error", "not_found",
			fmt.Sprintf("no endpoint %s %s: see GET /v1/models, POST /v1/chat/completions, POST /v1/completions, GET /health, GET /minfer/plan", r.Method, r.URL.Path))
	})
	return mux
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func writeError(w http.ResponseWriter, status int, typ, code, param, msg string) {
	d := errorDetail{Message: msg, Type: typ}
	if code != "" {
		d.Code = &code
	}
	if param != "" {
		d.Param = &param
	}
	writeJSON(w, status, errorBody{d})
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, typ, code, msg string) {
	s.logf("%s %s: %d %s", r.Method, r.URL.Path, status, msg)
	writeError(w, status, typ, code, "", msg)
}

func (s *Server) logf(format string, a ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, a...)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.Encode(v)
}

// failErr answers an error from parsing or generation.
func (s *Server) failErr(w http.ResponseWriter, r *http.Request, err error) {
	var br *badRequest
	switch {
	case errors.As(err, &br):
		code := br.code
		if br.status == http.StatusRequestEntityTooLarge {
			code = "request_too_large"
		}
		s.logf("%s %s: %d %s", r.Method, r.URL.Path, br.status, br.msg)
		writeError(w, br.status, "invalid_request_error", code, br.param, br.msg)
	case errors.Is(err, errQueueFull):
		w.Header().Set("Retry-After", "1")
		s.fail(w, r, http.StatusTooManyRequests, "rate_limit_error", "queue_full",
			fmt.Sprintf("the server is busy: %d requests are already waiting; retry shortly", s.cfg.QueueSize))
	case errors.Is(err, chat.ErrPromptTooLong):
		writeError(w, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded", "messages", err.Error())
	case errors.Is(err, chat.ErrTemplate):
		writeError(w, http.StatusBadRequest, "invalid_request_error", "template_error", "messages", err.Error())
	case errors.Is(err, context.Canceled):
		// The client left; nobody reads an answer.
	default:
		s.fail(w, r, http.StatusInternalServerError, "server_error", "", err.Error())
	}
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "busy": s.busy.Load(), "queued": len(s.jobs)})
}

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (s *Server) modelObject() modelObject {
	return modelObject{ID: s.model.ID, Object: "model", Created: s.created, OwnedBy: "minfer"}
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []modelObject{s.modelObject()}})
}

func (s *Server) modelByID(w http.ResponseWriter, r *http.Request) {
	if err := s.checkModel(r.PathValue("id")); err != nil {
		s.failModel(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.modelObject())
}

var errNoModel = errors.New("model not found")

// checkModel accepts "" (the loaded model), its id, or its file name.
func (s *Server) checkModel(id string) error {
	if id == "" || id == s.model.ID || strings.TrimSuffix(id, ".gguf") == s.model.ID {
		return nil
	}
	return fmt.Errorf("%w: %q (this server serves %q)", errNoModel, id, s.model.ID)
}

// readRequest decodes a generation request into req and checks the model
// it names; on a failure it answers the client and reports false.
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request, req interface{ model() string }) bool {
	if err := decode(r, req); err != nil {
		s.failErr(w, r, err)
		return false
	}
	if err := s.checkModel(req.model()); err != nil {
		s.failModel(w, r, err)
		return false
	}
	return true
}

func (s *Server) failModel(w http.ResponseWriter, r *http.Request, err error) {
	s.logf("%s %s: 404 %v", r.Method, r.URL.Path, err)
	writeError(w, http.StatusNotFound, "invalid_request_error", "model_not_found", "model", err.Error())
}

func (s *Server) plan(w http.ResponseWriter, r *http.Request) {
	v, _ := s.report.Load().(reportBox)
	if v.v == nil {
		if err := s.Refresh(r.Context()); err != nil {
			s.failErr(w, r, err)
			return
		}
		v, _ = s.report.Load().(reportBox)
	}
	writeJSON(w, http.StatusOK, v.v)
}

func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// finishReason maps a stop reason to OpenAI's.
func finishReason(st chat.Stats) string {
	switch st.StopReason {
	case chat.StopMaxTokens, chat.StopContext:
		return "length"
	case chat.StopToolCalls:
		return "tool_calls"
	default:
		return "stop"
	}
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usageOf(st chat.Stats) *usage {
	return &usage{PromptTokens: st.PromptTokens, CompletionTokens: st.Generated, TotalTokens: st.PromptTokens + st.Generated}
}

// generation is what the chat and text handlers share: the job that runs
// on the worker, and how to write its answer.
type generation struct {
	stream     bool
	usage      bool // stream_options.include_usage
	run        func(ctx context.Context, e engine.Engine, emit func(chat.Event)) (string, chat.Stats, error)
	chunk      func(delta string, finish *string) any // one streamed chunk
	first      func() any                             // sent before the first delta (chat: the role), or nil
	beforeEnd  func() any                             // a chunk sent before the finishing one (chat: the tool calls), or nil
	final      func(text string, st chat.Stats) any   // the non-streamed answer
	usageChunk func(u *usage) any                     // the streamed usage chunk
}

func (s *Server) generate(w http.ResponseWriter, r *http.Request, g generation) {
	ctx := r.Context()
	var sse *sseWriter
	if g.stream {
		sse = &sseWriter{w: w}
	}
	var (
		text string
		st   chat.Stats
		gerr error
	)
	err := s.submit(ctx, func(e engine.Engine) {
		var emit func(chat.Event)
		if sse != nil {
			emit = func(ev chat.Event) {
				if ev.Text == "" {
					return
				}
				if !sse.started && g.first != nil {
					sse.send(g.first())
				}
				sse.send(g.chunk(ev.Text, nil))
			}
		}
		text, st, gerr = g.run(ctx, e, emit)
	})
	if err == nil {
		err = gerr
	}
	if err == nil && st.StopReason == chat.StopCancelled {
		err = context.Canceled
	}
	if err != nil {
		if sse != nil && sse.started {
			var br *badRequest
			msg := err.Error()
			if errors.As(err, &br) {
				msg = br.msg
			}
			if !errors.Is(err, context.Canceled) {
				sse.send(errorBody{errorDetail{Message: msg, Type: "server_error"}})
			}
			return
		}
		s.failErr(w, r, err)
		return
	}
	if sse == nil {
		writeJSON(w, http.StatusOK, g.final(text, st))
		return
	}
	if !sse.started && g.first != nil {
		sse.send(g.first())
	}
	if g.beforeEnd != nil {
		if c := g.beforeEnd(); c != nil {
			sse.send(c)
		}
	}
	fr := finishReason(st)
	sse.send(g.chunk("", &fr))
	if g.usage {
		sse.send(g.usageChunk(usageOf(st)))
	}
	sse.done()
}

// sseWriter writes server-sent events, starting the 200 response on the
// first one so that errors before any output keep their status code.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

func (s *sseWriter) start() {
	if s.started {
		return
	}
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.rc = http.NewResponseController(s.w)
	s.started = true
}

func (s *sseWriter) send(v any) {
	s.start()
	b, _ := json.Marshal(v)
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	s.rc.Flush()
}

func (s *sseWriter) done() {
	s.start()
	fmt.Fprint(s.w, "data: [DONE]\n\n")
	s.rc.Flush()
}

func unixNow() int64 { return time.Now().Unix() }
