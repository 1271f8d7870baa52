package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/internal/coretest"
	"github.com/minfer/minfer/internal/engine"
	"github.com/minfer/minfer/internal/ggtest"
)

// recorder remembers each reply's stats.
type recorder struct {
	*engine.Local
	stats []chat.Stats
}

func (r *recorder) Reply(ctx context.Context, msgs []chat.Message, o chat.GenOptions, emit func(chat.Event)) (string, chat.Stats, error) {
	text, st, err := r.Local.Reply(ctx, msgs, o, emit)
	r.stats = append(r.stats, st)
	return text, st, err
}

func (r *recorder) ReplyMessage(ctx context.Context, msgs []chat.Message, o chat.GenOptions, emit func(chat.Event)) (chat.Message, chat.Stats, error) {
	m, st, err := r.Local.ReplyMessage(ctx, msgs, o, emit)
	r.stats = append(r.stats, st)
	return m, st, err
}

// A templated model through the API: the messages go through the chat
// template (usage counts the rendered prompt), and a follow-up request of
// the same conversation reuses the KV cache of the common prefix.
func TestTemplatedChatReusesPrefixAcrossRequests(t *testing.T) {
	o := core.LoadOptions{Threads: 1, PlanOptions: core.PlanOptions{Ctx: 256,
		Device: func() devices.DeviceMemory { return devices.NoDevice{Reason: "test"} },
		Env:    func(string) (string, bool) { return "", false }}}
	s, err := core.Load(context.Background(), coretest.WithChatML(t, ggtest.Path(t, "models", "stories260K.gguf")), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := engine.NewLocal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Templated() {
		t.Fatal("the ChatML copy has no template")
	}
	rec := &recorder{Local: l}
	_, ts := newTestServer(t, rec, Config{})
	msgs := []chat.Message{{Role: "system", Content: "Tell stories."}, {Role: "user", Content: "Once upon a time"}}
	prompt, err := l.Conv.Prompt(msgs)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"messages":[{"role":"system","content":"Tell stories."},{"role":"user","content":"Once upon a time"}],"max_tokens":8,"temperature":0}`
	resp, b := do(t, "POST", ts.URL+"/v1/chat/completions", body, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var out chatCompletion
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Usage.PromptTokens != len(prompt) || out.Usage.CompletionTokens == 0 {
		t.Errorf("usage %+v, rendered prompt %d tokens", out.Usage, len(prompt))
	}
	reply := out.Choices[0].Message.Content
	follow, _ := json.Marshal(map[string]any{"max_tokens": 4, "temperature": 0, "messages": []map[string]string{
		{"role": "system", "content": "Tell stories."}, {"role": "user", "content": "Once upon a time"},
		{"role": "assistant", "content": reply}, {"role": "user", "content": "And then?"}}})
	resp, b = do(t, "POST", ts.URL+"/v1/chat/completions", string(follow), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if len(rec.stats) != 2 || rec.stats[1].ReusedTokens < len(prompt)-1 {
		t.Errorf("the follow-up reused %d tokens of a %d-token shared prefix", rec.stats[1].ReusedTokens, len(prompt))
	}
	if strings.Contains(reply, "<|im_end|>") {
		t.Errorf("the template's end marker leaked into the reply: %q", reply)
	}
}
