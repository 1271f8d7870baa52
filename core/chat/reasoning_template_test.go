package chat

import (
	"os"
	"strings"
	"testing"

	"github.com/minfer/minfer/internal/ggtest"
)

// Qwen3's own template (testdata/templates/Qwen-Qwen3-0.6B.jinja, as
// llama.cpp ships it) keeps an earlier turn's reasoning out of the next
// prompt and keeps the answer: the window stores the whole reply (think block
// included) and leaves that choice to the template.
func TestQwen3TemplateDropsEarlierReasoning(t *testing.T) {
	src, err := os.ReadFile(ggtest.Path(t, "templates", "Qwen-Qwen3-0.6B.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := NewTemplate(string(src), "", "<|im_end|>")
	if err != nil {
		t.Fatal(err)
	}
	reply := "<think>\nThe user greets me. I should greet back.\n</think>\n\nHello! How can I help?"
	msgs := []Message{
		{Role: "system", Content: "You are helpful."},
		{Role: "user", Content: "Hi"},
		{Role: "assistant", Content: reply},
		{Role: "user", Content: "Tell me a joke."},
	}
	got, err := tmpl.Render(msgs, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nYou are helpful.<|im_end|>\n" +
		"<|im_start|>user\nHi<|im_end|>\n" +
		"<|im_start|>assistant\nHello! How can I help?<|im_end|>\n" +
		"<|im_start|>user\nTell me a joke.<|im_end|>\n" +
		"<|im_start|>assistant\n"
	if got != want {
		t.Fatalf("render:\n%q\nwant\n%q", got, want)
	}
	// What the window shows of that reply is the same split.
	if r := SplitReasoning(reply); r.Answer != "Hello! How can I help?" || !strings.HasPrefix(r.Reasoning, "The user greets me") {
		t.Fatalf("split %+v", r)
	}
	// The last assistant turn (a reply being continued) keeps its block.
	got, err = tmpl.Render(msgs[:3], false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(got, "<|im_start|>assistant\n<think>\nThe user greets me. I should greet back.\n</think>\n\nHello! How can I help?<|im_end|>\n") {
		t.Fatalf("the last turn lost its reasoning: %q", got)
	}
}

// Gemma 3's own template (testdata/templates/google-gemma-3-it.jinja): the
// system prompt folds into the first user turn, the assistant is "model",
// and the generation prompt opens a model turn.
func TestGemma3TemplateRenders(t *testing.T) {
	src, err := os.ReadFile(ggtest.Path(t, "templates", "google-gemma-3-it.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := NewTemplate(string(src), "<bos>", "<eos>")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render([]Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Hi"},
		{Role: "assistant", Content: "Hello."},
		{Role: "user", Content: "Who are you?"},
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n" +
		"<start_of_turn>model\nHello.<end_of_turn>\n" +
		"<start_of_turn>user\nWho are you?<end_of_turn>\n" +
		"<start_of_turn>model\n"
	if got != want {
		t.Fatalf("render:\n%q\nwant\n%q", got, want)
	}
	if tmpl.Family() != FamilyGemma {
		t.Errorf("family %q, want %q", tmpl.Family(), FamilyGemma)
	}
}
