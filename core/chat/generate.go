package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/minfer/minfer/core/tokenizer"
)

// Evaluator is the model side of the loop (core.Session satisfies it): it
// evaluates tokens at the next cache positions and can forget positions.
type Evaluator interface {
	Eval(ctx context.Context, tokens []int32, all bool) ([]float32, error)
	Rewind(n int) error
	NPast() int
	NCtxLen() int
}

// rewindLimited is implemented by evaluators whose cache cannot rewind to
// every earlier position (core.Session with sliding-window rings: the
// window before an old position may be overwritten). generate then
// re-evaluates from the start instead of reusing the prefix.
// intoEvaluator is an Evaluator that can read the last token's logits
// into a slice it is given (core.Session): a decode loop then reuses one.
type intoEvaluator interface {
	EvalInto(ctx context.Context, tokens []int32, dst []float32) ([]float32, error)
}

type rewindLimited interface {
	CanRewind(n int) bool
}

// GenOptions control one reply.
type GenOptions struct {
	Sampler   SamplerSettings
	MaxTokens int      // 0: until end of turn or a full context
	Stop      []string // extra stop strings (the template's end markers are always used)
	// Tools is a JSON array of tool definitions (OpenAI shape) given to the
	// template as tools; nil: none. With tools, control tokens whose text
	// marks a tool call in the template's format ([TOOL_CALLS],
	// <|python_tag|>, …) are kept in the reply text so it can be parsed.
	Tools []byte
	// ToolChoice is the request's tool_choice as the client wrote it (JSON;
	// nil: absent), for engines that pass a request on to a server (the
	// remote engine). Local engines do not read it: Tools is already what
	// ToolsForChoice left of the tools for that choice.
	ToolChoice []byte
}

// Event is one streamed piece of the reply.
type Event struct {
	Text  string // new text (may be empty while bytes or a possible stop string are held back)
	Token int32
}

// Stop reasons.
const (
	StopEOG       = "end of turn"
	StopString    = "stop string"
	StopMaxTokens = "max tokens"
	StopContext   = "context full"
	StopCancelled = "cancelled"
)

// Stats describe one reply.
type Stats struct {
	PromptTokens    int // tokens of the rendered conversation
	ReusedTokens    int // of those, already in the KV cache from earlier turns
	PrefillTokens   int // evaluated for this reply's prompt
	Generated       int
	DroppedMessages int // oldest turns dropped to fit the context
	PrefillTime     time.Duration
	GenTime         time.Duration
	StopReason      string
}

// PrefillRate is prompt tokens per second.
func (s Stats) PrefillRate() float64 { return rate(s.PrefillTokens, s.PrefillTime) }

// GenRate is generated tokens per second.
func (s Stats) GenRate() float64 { return rate(s.Generated, s.GenTime) }

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// ErrPromptTooLong is returned when even the last message alone does not
// fit the context.
var ErrPromptTooLong = errors.New("chat: prompt does not fit the context")

// Conversation drives a model through chat turns, keeping the KV cache of
// the common prefix between turns so a second turn evaluates only what is
// new.
type Conversation struct {
	ev     Evaluator
	tok    *tokenizer.Tokenizer
	tmpl   *Template // nil: plain completion
	cached []int32   // exactly the tokens in the KV cache
	// ReserveTokens is the room kept free for the reply when old turns must
	// be dropped (default: a quarter of the context).
	ReserveTokens int
}

// NewConversation binds a model and its tokenizer; tmpl nil means the model
// has no chat template and runs as plain completion.
func NewConversation(ev Evaluator, tok *tokenizer.Tokenizer, tmpl *Template) *Conversation {
	return &Conversation{ev: ev, tok: tok, tmpl: tmpl}
}

// Template is the chat template in use (nil for plain completion).
func (c *Conversation) Template() *Template { return c.tmpl }

// CachedTokens is how many tokens the KV cache holds for this conversation.
func (c *Conversation) CachedTokens() int { return len(c.cached) }

// Reset forgets the cache (a new chat).
func (c *Conversation) Reset() error {
	c.cached = c.cached[:0]
	return c.ev.Rewind(0)
}

// Prompt renders msgs and tokenizes them: what the model will see. The
// template's own text may hold control tokens ("<|im_start|>"); what the
// messages say never becomes one: a user who types "<|im_end|>" gets that
// text, not the end of their turn.
func (c *Conversation) Prompt(msgs []Message) ([]int32, error) {
	return c.PromptWithTools(msgs, nil)
}

// PromptWithTools is Prompt with the template variable tools set from
// toolsJSON (nil: undefined).
func (c *Conversation) PromptWithTools(msgs []Message, toolsJSON []byte) ([]int32, error) {
	if c.tmpl == nil {
		var sb strings.Builder
		for _, m := range msgs {
			sb.WriteString(m.Content)
		}
		return c.tok.Encode(sb.String(), true, false)
	}
	text, parts, err := c.render(msgs, toolsJSON)
	var raised *RaisedError
	if errors.As(err, &raised) && len(msgs) > 0 && msgs[0].Role == "system" {
		// Templates that refuse a system role (Gemma 2, Mistral) get it
		// folded into the first user turn, as their authors intend.
		text, parts, err = c.render(FoldSystemPrompt(msgs), toolsJSON)
	}
	if err != nil {
		return nil, c.asModelTemplateError(err)
	}
	toks, err := c.tok.EncodeParts(parts, false)
	if err != nil {
		return nil, err
	}
	if c.tok.AddBOS() && !c.tmpl.StartsWithBOS(text) && c.tok.BOS() >= 0 {
		toks = append([]int32{c.tok.BOS()}, toks...)
	}
	return toks, nil
}

// render renders msgs with each content replaced by a marker, then splits
// the result at the markers: template text (special tokens parsed) and
// message text (never parsed). A template that alters the markers (it
// transforms message text) is rendered plainly and every special token
// written in a message is taken out of it first.
func (c *Conversation) render(msgs []Message, toolsJSON []byte) (string, []tokenizer.Part, error) {
	marked := make([]Message, len(msgs))
	for i, m := range msgs {
		marked[i] = m
		if m.hasContent() {
			marked[i].Content = marker(i)
		}
	}
	out, err := c.renderTemplate(marked, toolsJSON)
	if err != nil {
		return "", nil, err
	}
	var parts []tokenizer.Part
	var full strings.Builder
	rest := out
	for i, m := range msgs {
		if !m.hasContent() {
			continue // tool calls only: their text is the template's
		}
		k := strings.Index(rest, marker(i))
		if k < 0 || strings.Contains(rest[k+len(marker(i)):], marker(i)) {
			return c.renderPlain(msgs, toolsJSON)
		}
		parts = append(parts, tokenizer.Part{Text: rest[:k], Special: true}, tokenizer.Part{Text: m.Content})
		full.WriteString(rest[:k])
		full.WriteString(m.Content)
		rest = rest[k+len(marker(i)):]
	}
	parts = append(parts, tokenizer.Part{Text: rest, Special: true})
	full.WriteString(rest)
	return full.String(), parts, nil
}

// renderTemplate renders with the generation prompt, and tools when given.
func (c *Conversation) renderTemplate(msgs []Message, toolsJSON []byte) (string, error) {
	if toolsJSON != nil {
		return c.tmpl.RenderWithTools(msgs, toolsJSON, true)
	}
	return c.tmpl.Render(msgs, true)
}

func (c *Conversation) renderPlain(msgs []Message, toolsJSON []byte) (string, []tokenizer.Part, error) {
	clean := make([]Message, len(msgs))
	for i, m := range msgs {
		clean[i] = m
		clean[i].Content = c.stripSpecials(m.Content)
	}
	out, err := c.renderTemplate(clean, toolsJSON)
	if err != nil {
		return "", nil, err
	}
	return out, []tokenizer.Part{{Text: out, Special: true}}, nil
}

// stripSpecials removes control-token text from a message.
func (c *Conversation) stripSpecials(s string) string {
	for _, id := range []int32{c.tok.BOS(), c.tok.EOS(), c.tok.EOT(), c.tok.EOM()} {
		if id >= 0 {
			if txt := c.tok.TokenText(id); txt != "" {
				s = strings.ReplaceAll(s, txt, "")
			}
		}
	}
	for _, st := range c.tmpl.StopStrings() {
		s = strings.ReplaceAll(s, st, "")
	}
	return s
}

// marker stands for message i while rendering: private-use characters no
// template writes itself.
func marker(i int) string { return fmt.Sprintf("\uE000%d\uE001", i) }

// fit drops the oldest non-system messages until the prompt leaves room
// for the reply, always keeping the system prompt and the last message.
func (c *Conversation) fit(msgs []Message, toolsJSON []byte) ([]int32, []Message, int, error) {
	reserve := c.ReserveTokens
	if reserve <= 0 {
		reserve = c.ev.NCtxLen() / 4
	}
	limit := c.ev.NCtxLen() - reserve
	dropped := 0
	for {
		toks, err := c.PromptWithTools(msgs, toolsJSON)
		if err != nil {
			return nil, nil, 0, err
		}
		if len(toks) <= limit || len(toks) < c.ev.NCtxLen() && countDroppable(msgs) == 0 {
			if len(toks) >= c.ev.NCtxLen() {
				return nil, nil, 0, fmt.Errorf("%w: %d tokens, context %d", ErrPromptTooLong, len(toks), c.ev.NCtxLen())
			}
			return toks, msgs, dropped, nil
		}
		if countDroppable(msgs) == 0 {
			return nil, nil, 0, fmt.Errorf("%w: %d tokens, context %d", ErrPromptTooLong, len(toks), c.ev.NCtxLen())
		}
		msgs = dropOldest(msgs)
		dropped++
	}
}

func countDroppable(msgs []Message) int {
	n := 0
	for i, m := range msgs {
		if m.Role != "system" && i != len(msgs)-1 {
			n++
		}
	}
	return n
}

func dropOldest(msgs []Message) []Message {
	for i, m := range msgs {
		if m.Role != "system" && i != len(msgs)-1 {
			out := append([]Message(nil), msgs[:i]...)
			return append(out, msgs[i+1:]...)
		}
	}
	return msgs
}

// Reply generates the assistant's answer to msgs, streaming pieces to emit.
// Cancelling ctx stops within one token; the reply so far is returned with
// StopCancelled and the conversation stays usable.
func (c *Conversation) Reply(ctx context.Context, msgs []Message, opts GenOptions, emit func(Event)) (string, Stats, error) {
	var st Stats
	prompt, _, dropped, err := c.fit(msgs, opts.Tools)
	if err != nil {
		return "", st, err
	}
	st.DroppedMessages = dropped
	return c.generate(ctx, prompt, opts, emit, st)
}

// Complete continues raw text (models without a chat template, scripts).
func (c *Conversation) Complete(ctx context.Context, text string, opts GenOptions, emit func(Event)) (string, Stats, error) {
	prompt, err := c.tok.Encode(text, true, false)
	if err != nil {
		return "", Stats{}, err
	}
	if len(prompt) >= c.ev.NCtxLen() {
		return "", Stats{}, fmt.Errorf("%w: %d tokens, context %d", ErrPromptTooLong, len(prompt), c.ev.NCtxLen())
	}
	return c.generate(ctx, prompt, opts, emit, Stats{})
}

func (c *Conversation) generate(ctx context.Context, prompt []int32, opts GenOptions, emit func(Event), st Stats) (string, Stats, error) {
	if err := opts.Sampler.Validate(); err != nil {
		return "", st, err
	}
	st.PromptTokens = len(prompt)
	if len(prompt) == 0 {
		return "", st, errors.New("chat: empty prompt")
	}
	// Reuse the cached prefix; at least one token is evaluated to get logits.
	n := commonPrefix(c.cached, prompt)
	if n == len(prompt) {
		n--
	}
	if n > c.ev.NPast() {
		n = c.ev.NPast()
	}
	if rl, ok := c.ev.(rewindLimited); ok && !rl.CanRewind(n) {
		n = 0
	}
	if err := c.ev.Rewind(n); err != nil {
		return "", st, err
	}
	c.cached = append(c.cached[:n], prompt[n:]...)
	st.ReusedTokens = n
	st.PrefillTokens = len(prompt) - n
	t0 := time.Now()
	logits, err := c.ev.Eval(ctx, prompt[n:], false)
	st.PrefillTime = time.Since(t0)
	if err != nil {
		c.cached = c.cached[:c.ev.NPast()]
		if errors.Is(err, context.Canceled) {
			st.StopReason = StopCancelled
			return "", st, nil
		}
		return "", st, err
	}
	stops := append([]string(nil), opts.Stop...)
	if c.tmpl != nil {
		stops = append(stops, c.tmpl.StopStrings()...)
	}
	sampler := NewSampler(opts.Sampler)
	dec := c.tok.NewStreamDecoder()
	keep := c.keptControlText(opts)
	var text strings.Builder // everything decoded so far
	emitted := 0             // bytes of text already sent to emit
	t1 := time.Now()
	finish := func(reason string) (string, Stats, error) {
		st.StopReason = reason
		st.GenTime = time.Since(t1)
		full := text.String() + dec.Flush()
		if reason == StopString {
			full = cutAtStop(full, stops)
		}
		if len(full) > emitted && emit != nil {
			emit(Event{Text: full[emitted:], Token: -1})
		}
		return full, st, nil
	}
	for {
		if ctx.Err() != nil {
			return finish(StopCancelled)
		}
		if opts.MaxTokens > 0 && st.Generated >= opts.MaxTokens {
			return finish(StopMaxTokens)
		}
		tok := sampler.Sample(logits, recent(c.cached, opts.Sampler.RepeatLastN))
		if c.tok.IsEOG(tok) {
			return finish(StopEOG)
		}
		st.Generated++
		text.WriteString(dec.Add(tok))
		if marker, ok := keep[tok]; ok {
			text.WriteString(dec.Flush() + marker)
		}
		full := text.String()
		if hasStop(full, stops) {
			return finish(StopString)
		}
		// Hold back a tail that could still become a stop string.
		safe := len(full) - holdBack(full, stops)
		if safe > emitted && emit != nil {
			emit(Event{Text: full[emitted:safe], Token: tok})
			emitted = safe
		}
		if c.ev.NPast() >= c.ev.NCtxLen() {
			return finish(StopContext)
		}
		if into, ok := c.ev.(intoEvaluator); ok {
			// The sampler is done with the previous step's logits: the
			// next step's go into the same memory.
			logits, err = into.EvalInto(ctx, []int32{tok}, logits)
		} else {
			logits, err = c.ev.Eval(ctx, []int32{tok}, false)
		}
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return finish(StopCancelled)
			}
			c.cached = c.cached[:c.ev.NPast()]
			return text.String(), st, err
		}
		c.cached = append(c.cached, tok)
	}
}

func recent(toks []int32, n int) []int32 {
	if n < 0 || n > len(toks) {
		return toks
	}
	return toks[len(toks)-n:]
}

func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func hasStop(s string, stops []string) bool {
	for _, st := range stops {
		if st != "" && strings.Contains(s, st) {
			return true
		}
	}
	return false
}

func cutAtStop(s string, stops []string) string {
	cut := len(s)
	for _, st := range stops {
		if i := strings.Index(s, st); st != "" && i >= 0 && i < cut {
			cut = i
		}
	}
	return s[:cut]
}

// holdBack is the length of the longest suffix of s that is a proper
// prefix of a stop string (or of a tag: ToolStream and SplitReasoning hold
// back a partial marker with it too).
func holdBack(s string, stops []string) int {
	best := 0
	for _, st := range stops {
		for k := min(len(st)-1, len(s)); k > best; k-- {
			if strings.HasSuffix(s, st[:k]) {
				best = k
				break
			}
		}
	}
	return best
}
