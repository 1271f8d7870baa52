package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/minfer/minfer/core/chat"
)

// Remote is a model served by an OpenAI-compatible server (`minfer serve`,
// llama.cpp's llama-server, vLLM, Ollama, …), driven through the official
// OpenAI Go client. It keeps no state between calls: the server decides
// what it caches.
type Remote struct {
	BaseURL string // e.g. http://127.0.0.1:8080/v1
	Model   string // the model id the server lists
	// NoStream asks for whole answers instead of server-sent events; emit
	// then gets the reply in one piece.
	NoStream bool
	client   openai.Client
}

// Sentinels of remote failures, wrapped by *RemoteError.
var (
	ErrUnreachable   = errors.New("cannot reach the server")
	ErrUnauthorized  = errors.New("the server refused the API key")
	ErrModelNotFound = errors.New("the server has no such model")
	ErrServer        = errors.New("the server answered with an error")
)

// RemoteError is a failed call to a server, in words a person can act on.
type RemoteError struct {
	URL    string
	Status int    // HTTP status; 0 when no answer came
	Detail string // the server's own message, or the network error
	Kind   error  // one of the sentinels above
}

func (e *RemoteError) Error() string {
	switch {
	case e.Status == 0:
		return fmt.Sprintf("%v at %s: %s", e.Kind, e.URL, e.Detail)
	case e.Detail != "":
		return fmt.Sprintf("%v (HTTP %d from %s): %s", e.Kind, e.Status, e.URL, e.Detail)
	default:
		return fmt.Sprintf("%v (HTTP %d from %s)", e.Kind, e.Status, e.URL)
	}
}

func (e *RemoteError) Unwrap() error { return e.Kind }

// NormalizeBaseURL accepts "host:port", "http://host:port" or a URL
// already ending in /v1 and returns the API base (…/v1).
func NormalizeBaseURL(u string) (string, error) {
	u = strings.TrimSpace(u)
	if u == "" {
		return "", errors.New("engine: the server address is empty")
	}
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return "", fmt.Errorf("engine: %q is not an http:// or https:// address", u)
	}
	u = strings.TrimRight(u, "/")
	if !strings.HasSuffix(u, "/v1") {
		u += "/v1"
	}
	return u, nil
}

// Connect opens a client for the server at baseURL (see NormalizeBaseURL)
// and lists its models. model "" picks the first one listed; a model the
// server does not list is ErrModelNotFound.
func Connect(ctx context.Context, baseURL, apiKey, model string) (*Remote, []string, error) {
	base, err := NormalizeBaseURL(baseURL)
	if err != nil {
		return nil, nil, err
	}
	r := &Remote{BaseURL: base, client: openai.NewClient(
		option.WithBaseURL(base+"/"),
		option.WithAPIKey(apiKey),
		option.WithMaxRetries(1),
		option.WithHTTPClient(&http.Client{}),
	)}
	models, err := r.Models(ctx)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case model == "" && len(models) == 0:
		return nil, nil, &RemoteError{URL: base, Kind: ErrModelNotFound, Status: http.StatusOK, Detail: "it lists no models"}
	case model == "":
		model = models[0]
	default:
		if !slices.Contains(models, model) {
			return nil, models, &RemoteError{URL: base, Kind: ErrModelNotFound, Status: http.StatusNotFound,
				Detail: fmt.Sprintf("%q is not among %s", model, strings.Join(models, ", "))}
		}
	}
	r.Model = model
	return r, models, nil
}

// Models lists the server's model ids.
func (r *Remote) Models(ctx context.Context) ([]string, error) {
	page, err := r.client.Models.List(ctx)
	if err != nil {
		return nil, r.wrap(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	return ids, nil
}

// Reply implements Engine: a streamed chat completion (the reply's text;
// see ReplyMessage for its tool calls).
func (r *Remote) Reply(ctx context.Context, msgs []chat.Message, opts chat.GenOptions, emit func(chat.Event)) (string, chat.Stats, error) {
	m, st, err := r.ReplyMessage(ctx, msgs, opts, emit)
	return m.Content, st, err
}

// ReplyMessage implements Engine: a chat completion with opts.Tools as the
// request's tools (and opts.ToolChoice as its tool_choice), tool-call and
// tool turns sent as the OpenAI API has them. The reply's tool calls come
// back in the message (streamed ones assembled from their deltas by
// index) with Stats.StopReason chat.StopToolCalls; emit sees the text.
func (r *Remote) ReplyMessage(ctx context.Context, msgs []chat.Message, opts chat.GenOptions, emit func(chat.Event)) (chat.Message, chat.Stats, error) {
	p, reqOpts, err := r.chatParams(msgs, opts)
	if err != nil {
		return chat.Message{Role: "assistant"}, chat.Stats{}, err
	}
	t0 := time.Now()
	if r.NoStream {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
		c, err := r.client.Chat.Completions.New(ctx, p, reqOpts...)
		if err != nil {
			return r.endMessage(ctx, chat.Message{Role: "assistant"}, chat.Stats{}, t0, "", err)
		}
		if len(c.Choices) == 0 {
			return r.endMessage(ctx, chat.Message{Role: "assistant"}, chat.Stats{}, t0, "", nil)
		}
		st := chat.Stats{PromptTokens: int(c.Usage.PromptTokens), Generated: int(c.Usage.CompletionTokens)}
		cm := c.Choices[0].Message
		m := chat.Message{Role: "assistant", Content: cm.Content}
		for _, tc := range cm.ToolCalls {
			if tc.Type != "function" {
				continue // custom tools: not something Minfer defines
			}
			m.ToolCalls = append(m.ToolCalls, chat.ToolCall{ID: tc.ID, Type: "function",
				Function: chat.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
		}
		if emit != nil && m.Content != "" {
			emit(chat.Event{Text: m.Content, Token: -1})
		}
		return r.endMessage(ctx, m, st, t0, c.Choices[0].FinishReason, nil)
	}
	stream := r.client.Chat.Completions.NewStreaming(ctx, p, reqOpts...)
	defer stream.Close()
	var text strings.Builder
	var calls toolCallDeltas
	var st chat.Stats
	finish := ""
	for stream.Next() {
		c := stream.Current()
		if c.Usage.CompletionTokens > 0 || c.Usage.PromptTokens > 0 {
			st.PromptTokens, st.Generated = int(c.Usage.PromptTokens), int(c.Usage.CompletionTokens)
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue // one reply is asked for
			}
			if d := ch.Delta.Content; d != "" {
				text.WriteString(d)
				if emit != nil {
					emit(chat.Event{Text: d, Token: -1})
				}
			}
			for _, d := range ch.Delta.ToolCalls {
				calls.add(d)
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	m := chat.Message{Role: "assistant", Content: text.String(), ToolCalls: calls.calls()}
	return r.endMessage(ctx, m, st, t0, finish, stream.Err())
}

// toolCallDeltas assembles streamed tool calls: the first delta of a call
// (by index) brings its id, type and name, later ones pieces of its
// arguments.
type toolCallDeltas struct {
	order []int64
	byIdx map[int64]*chat.ToolCall
}

func (a *toolCallDeltas) add(d openai.ChatCompletionChunkChoiceDeltaToolCall) {
	if a.byIdx == nil {
		a.byIdx = map[int64]*chat.ToolCall{}
	}
	tc := a.byIdx[d.Index]
	if tc == nil {
		tc = &chat.ToolCall{Type: "function"}
		a.byIdx[d.Index] = tc
		a.order = append(a.order, d.Index)
	}
	if d.ID != "" {
		tc.ID = d.ID
	}
	if d.Type != "" {
		tc.Type = d.Type
	}
	tc.Function.Name += d.Function.Name
	tc.Function.Arguments += d.Function.Arguments
}

// calls are the assembled calls in the order their indexes first came.
func (a *toolCallDeltas) calls() []chat.ToolCall {
	if len(a.order) == 0 {
		return nil
	}
	out := make([]chat.ToolCall, 0, len(a.order))
	for _, i := range a.order {
		out = append(out, *a.byIdx[i])
	}
	return out
}

// chatParams is the request for msgs and opts. Tools and tool_choice go
// into the body as the JSON they are (a template on the server renders
// the tool definitions in the order their keys were written).
func (r *Remote) chatParams(msgs []chat.Message, opts chat.GenOptions) (openai.ChatCompletionNewParams, []option.RequestOption, error) {
	p := openai.ChatCompletionNewParams{Model: r.Model, StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}}
	for i, m := range msgs {
		switch m.Role {
		case "system":
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		case "assistant":
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = param.NewOpt(m.Content)
			}
			for j, tc := range m.ToolCalls {
				if tc.Function.Name == "" {
					return p, nil, fmt.Errorf("engine: message %d: tool call %d has no function name", i, j)
				}
				args := tc.Function.Arguments
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Function.Name, Arguments: args}}})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case "tool":
			if m.ToolCallID == "" {
				return p, nil, fmt.Errorf("engine: message %d: a tool result without the id of its call cannot be sent to a server", i)
			}
			p.Messages = append(p.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		default:
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		}
	}
	sp := samplingOf(opts)
	p.Temperature, p.TopP, p.Seed = sp.temperature, sp.topP, sp.seed
	p.PresencePenalty, p.FrequencyPenalty, p.MaxTokens = sp.presence, sp.frequency, sp.maxTokens
	if len(opts.Stop) > 0 {
		p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: opts.Stop}
	}
	if opts.Tools == nil {
		return p, nil, nil
	}
	tools := json.RawMessage(bytes.TrimSpace(opts.Tools))
	var defs []json.RawMessage
	if err := json.Unmarshal(tools, &defs); err != nil {
		return p, nil, fmt.Errorf("engine: the tools are not a JSON array: %w", err)
	}
	reqOpts := []option.RequestOption{option.WithJSONSet("tools", tools)}
	if choice := bytes.TrimSpace(opts.ToolChoice); len(choice) > 0 && !bytes.Equal(choice, []byte("null")) {
		if !json.Valid(choice) {
			return p, nil, errors.New("engine: tool_choice is not JSON")
		}
		reqOpts = append(reqOpts, option.WithJSONSet("tool_choice", json.RawMessage(choice)))
	}
	return p, reqOpts, nil
}

// sampling is the part of a request the sampler and the token limit set,
// the same for chat and text completions; a zero field is left out.
type sampling struct {
	temperature, topP, presence, frequency param.Opt[float64]
	seed, maxTokens                        param.Opt[int64]
}

func samplingOf(opts chat.GenOptions) sampling {
	s := opts.Sampler
	sp := sampling{
		temperature: openai.Float(float64(s.Temperature)),
		topP:        openai.Float(float64(s.TopP)),
		seed:        openai.Int(int64(s.Seed & (1<<63 - 1))),
	}
	if s.PresencePenalty != 0 {
		sp.presence = openai.Float(float64(s.PresencePenalty))
	}
	if s.FrequencyPenalty != 0 {
		sp.frequency = openai.Float(float64(s.FrequencyPenalty))
	}
	if opts.MaxTokens > 0 {
		sp.maxTokens = openai.Int(int64(opts.MaxTokens))
	}
	return sp
}

// endMessage is end for a chat reply: a reply that ended in tool calls
// stops with chat.StopToolCalls and its text is trimmed, as a local one.
func (r *Remote) endMessage(ctx context.Context, m chat.Message, st chat.Stats, t0 time.Time, finish string, err error) (chat.Message, chat.Stats, error) {
	if finish == "function_call" { // the legacy name of tool_calls
		finish = "tool_calls"
	}
	var text string
	text, st, err = r.end(ctx, m.Content, st, t0, finish, err)
	m.Content = text
	if len(m.ToolCalls) > 0 {
		m.Content = strings.TrimSpace(text) // as a local reply with calls has it
	}
	return m, st, err
}

// Complete implements Engine: a streamed text completion.
func (r *Remote) Complete(ctx context.Context, prompt string, opts chat.GenOptions, emit func(chat.Event)) (string, chat.Stats, error) {
	p := openai.CompletionNewParams{Model: openai.CompletionNewParamsModel(r.Model),
		Prompt:        openai.CompletionNewParamsPromptUnion{OfString: param.NewOpt(prompt)},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}}
	sp := samplingOf(opts)
	p.Temperature, p.TopP, p.Seed = sp.temperature, sp.topP, sp.seed
	p.PresencePenalty, p.FrequencyPenalty, p.MaxTokens = sp.presence, sp.frequency, sp.maxTokens
	if len(opts.Stop) > 0 {
		p.Stop = openai.CompletionNewParamsStopUnion{OfStringArray: opts.Stop}
	}
	t0 := time.Now()
	if r.NoStream {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
		c, err := r.client.Completions.New(ctx, p)
		if err != nil {
			return r.end(ctx, "", chat.Stats{}, t0, "", err)
		}
		if len(c.Choices) == 0 {
			return r.end(ctx, "", chat.Stats{}, t0, "", nil)
		}
		st := chat.Stats{PromptTokens: int(c.Usage.PromptTokens), Generated: int(c.Usage.CompletionTokens)}
		text := c.Choices[0].Text
		if emit != nil && text != "" {
			emit(chat.Event{Text: text, Token: -1})
		}
		return r.end(ctx, text, st, t0, string(c.Choices[0].FinishReason), nil)
	}
	stream := r.client.Completions.NewStreaming(ctx, p)
	defer stream.Close()
	var text strings.Builder
	var st chat.Stats
	finish := ""
	for stream.Next() {
		c := stream.Current()
		if c.Usage.CompletionTokens > 0 || c.Usage.PromptTokens > 0 {
			st.PromptTokens, st.Generated = int(c.Usage.PromptTokens), int(c.Usage.CompletionTokens)
		}
		for _, ch := range c.Choices {
			if ch.Text != "" {
				text.WriteString(ch.Text)
				if emit != nil {
					emit(chat.Event{Text: ch.Text, Token: -1})
				}
			}
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
	}
	return r.end(ctx, text.String(), st, t0, finish, stream.Err())
}

// end turns the stream's outcome into the Engine contract: cancelled by
// us → StopCancelled; ended without a finish reason → interrupted, with
// the text so far.
func (r *Remote) end(ctx context.Context, text string, st chat.Stats, t0 time.Time, finish string, err error) (string, chat.Stats, error) {
	st.GenTime = time.Since(t0)
	if ctx.Err() != nil {
		st.StopReason = chat.StopCancelled
		return text, st, nil
	}
	if err != nil {
		werr := r.wrap(err)
		if text != "" {
			st.StopReason = StopInterrupted
			return text, st, fmt.Errorf("%w after %d characters: %v", ErrInterrupted, len(text), werr)
		}
		return text, st, werr
	}
	switch finish {
	case "stop":
		st.StopReason = chat.StopEOG
	case "length":
		st.StopReason = chat.StopMaxTokens
	case "tool_calls":
		st.StopReason = chat.StopToolCalls
	case "":
		st.StopReason = StopInterrupted
		return text, st, fmt.Errorf("%w: the stream from %s ended without a finish reason after %d characters", ErrInterrupted, r.BaseURL, len(text))
	default:
		st.StopReason = finish
	}
	return text, st, nil
}

// isCut tells a connection dropped mid-answer from one never made.
func isCut(err error) bool {
	s := err.Error()
	return strings.Contains(s, "unexpected EOF") || strings.Contains(s, "connection reset")
}

// wrap classifies a client error.
func (r *Remote) wrap(err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		kind := ErrServer
		switch apiErr.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			kind = ErrUnauthorized
		case http.StatusNotFound:
			if apiErr.Code == "model_not_found" || strings.Contains(strings.ToLower(apiErr.Message), "model") {
				kind = ErrModelNotFound
			}
		}
		return &RemoteError{URL: r.BaseURL, Status: apiErr.StatusCode, Detail: apiErr.Message, Kind: kind}
	}
	var nerr net.Error // *net.OpError among them
	if errors.As(err, &nerr) || isCut(err) {
		return &RemoteError{URL: r.BaseURL, Detail: err.Error(), Kind: ErrUnreachable}
	}
	return &RemoteError{URL: r.BaseURL, Detail: err.Error(), Kind: ErrServer}
}

// Templated implements Engine.
func (r *Remote) Templated() bool { return true }

// Reset implements Engine; the server keeps its own cache.
func (r *Remote) Reset() error { return nil }

// Where implements Engine.
func (r *Remote) Where() string { return fmt.Sprintf("server %s · model %s", r.BaseURL, r.Model) }
