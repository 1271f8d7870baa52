package chat

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minfer/minfer/core/tokenizer"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/ggtest"
)

// scriptedEval is a model that answers with a fixed token sequence: the
// logits after each evaluation put the next scripted token first.
type scriptedEval struct {
	vocab  int
	script []int32
	next   int
	past   int
	prompt []int32 // the last prompt evaluated
}

func (s *scriptedEval) Eval(_ context.Context, toks []int32, _ bool) ([]float32, error) {
	if len(toks) > 1 || s.past == 0 {
		s.prompt = append([]int32(nil), toks...)
	}
	s.past += len(toks)
	logits := make([]float32, s.vocab)
	if s.next < len(s.script) {
		logits[s.script[s.next]] = 100
		s.next++
	}
	return logits, nil
}
func (s *scriptedEval) Rewind(n int) error { s.past = n; return nil }
func (s *scriptedEval) NPast() int         { return s.past }
func (s *scriptedEval) NCtxLen() int       { return 4096 }

func spmTokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	f, err := gguf.Open(ggtest.Path(t, "vocab", "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(&f.Meta)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

const weatherTools = `[{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]`

// A tool round trip through a Conversation with Qwen 2.5's template: the
// model's reply "<tool_call>…</tool_call>" becomes an assistant message
// with one call (nothing of it streamed as text, stop reason "tool calls");
// the next turn renders the call and its result back into the prompt.
func TestReplyMessageToolRoundTrip(t *testing.T) {
	tok := spmTokenizer(t)
	src, err := os.ReadFile(filepath.Join(ggtest.Path(t, "templates"), "Qwen-Qwen2.5-7B-Instruct.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := NewTemplate(string(src), "", "</s>")
	if err != nil {
		t.Fatal(err)
	}
	reply := "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	script, err := tok.Encode(reply, false, false)
	if err != nil {
		t.Fatal(err)
	}
	ev := &scriptedEval{vocab: tok.VocabSize(), script: append(script, tok.EOS())}
	c := NewConversation(ev, tok, tmpl)
	msgs := []Message{{Role: "user", Content: "Weather in Paris?"}}
	opts := GenOptions{Sampler: GreedySamplerSettings(), Tools: []byte(weatherTools)}
	var shown strings.Builder
	msg, st, err := c.ReplyMessage(context.Background(), msgs, opts, func(e Event) { shown.WriteString(e.Text) })
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(shown.String()) != "" || msg.Content != "" || len(msg.ToolCalls) != 1 || st.StopReason != StopToolCalls {
		t.Fatalf("shown %q, message %+v, stop %q", shown.String(), msg, st.StopReason)
	}
	call := msg.ToolCalls[0]
	if call.Function.Name != "get_weather" || call.Function.Arguments != `{"city":"Paris"}` || call.ID == "" {
		t.Errorf("call %+v", call)
	}
	// The prompt carried the tool definitions.
	if prompt := tok.Decode(ev.prompt); !strings.Contains(prompt, `"name": "get_weather"`) {
		t.Errorf("prompt without the tools:\n%s", prompt)
	}

	// Second turn: the call and its result go back to the model.
	msgs = append(msgs, msg, Message{Role: "tool", ToolCallID: call.ID, Name: "get_weather", Content: `{"temp": 21}`})
	answer := "It is 21 degrees."
	script, _ = tok.Encode(answer, false, false)
	ev.script, ev.next = append(script, tok.EOS()), 0
	shown.Reset()
	msg, st, err = c.ReplyMessage(context.Background(), msgs, opts, func(e Event) { shown.WriteString(e.Text) })
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.ToolCalls) != 0 || strings.TrimSpace(msg.Content) != answer || shown.String() != msg.Content || st.StopReason != StopEOG {
		t.Errorf("answer %+v shown %q stop %q", msg, shown.String(), st.StopReason)
	}
	full, err := tmpl.RenderWithTools(msgs, []byte(weatherTools), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", "<tool_response>\n{\"temp\": 21}\n</tool_response>"} {
		if !strings.Contains(full, want) {
			t.Errorf("second prompt lacks %q:\n%s", want, full)
		}
	}
	if prompt := tok.Decode(ev.prompt); !strings.Contains(prompt, "<tool_response>") {
		t.Errorf("evaluated prompt lacks the tool result:\n%s", prompt)
	}
}

// functionary (like Llama 3.1) opens a code call with the control token
// <|python_tag|>, which the decoder renders as nothing; with tools the
// conversation keeps its text so the call parses. (A phi-3 vocabulary with
// one control token renamed stands in for Llama 3.1's.)
func TestReplyMessageKeepsControlMarkers(t *testing.T) {
	f, err := gguf.Open(ggtest.Path(t, "vocab", "ggml-vocab-phi-3.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	toks, err := f.Meta.Strings("tokenizer.ggml.tokens")
	if err != nil {
		t.Fatal(err)
	}
	var tagID int32 = -1
	for i, s := range toks {
		if s == "<|placeholder1|>" {
			toks[i], tagID = "<|python_tag|>", int32(i) // edits the parsed metadata, not the file
		}
	}
	tok, err := tokenizer.FromGGUF(&f.Meta)
	f.Close()
	if err != nil || tagID < 0 || !tok.IsControl(tagID) {
		t.Fatalf("vocabulary: %v, tag %d", err, tagID)
	}
	src, err := os.ReadFile(filepath.Join(ggtest.Path(t, "templates"), "meetkai-functionary-medium-v3.1.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := NewTemplate(string(src), "<s>", "</s>")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := tok.Encode("print(6 * 7)", false, false)
	script := append(append([]int32{tagID}, body...), tok.EOS())
	for _, tools := range []bool{true, false} {
		ev := &scriptedEval{vocab: tok.VocabSize(), script: script}
		c := NewConversation(ev, tok, tmpl)
		opts := GenOptions{Sampler: GreedySamplerSettings()}
		if tools {
			opts.Tools = []byte(weatherTools)
		}
		msg, _, err := c.ReplyMessage(context.Background(), []Message{{Role: "user", Content: "Weather in Paris?"}}, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tools && (len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "python" || !strings.Contains(msg.ToolCalls[0].Function.Arguments, "print(6 * 7)")) {
			t.Errorf("with tools: %+v", msg)
		}
		if !tools && (len(msg.ToolCalls) != 0 || strings.Contains(msg.Content, "<|python_tag|>")) {
			t.Errorf("without tools the reply is text without control tokens: %+v", msg)
		}
	}
}
