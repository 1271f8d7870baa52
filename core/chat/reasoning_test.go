package chat

import (
	"strings"
	"testing"
)

func TestSplitReasoning(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     Reply
	}{
		{"no block", "Paris.", Reply{Answer: "Paris."}},
		{"qwen3 block", "<think>\nThe capital of France.\n</think>\n\nParis.", Reply{Reasoning: "The capital of France.", Answer: "Paris."}},
		{"empty block (thinking off)", "<think>\n\n</think>\n\nParis.", Reply{Answer: "Paris."}},
		{"leading space", "\n <think>a</think>b", Reply{Reasoning: "a", Answer: "b"}},
		{"template opened it (R1 distill)", "Let me think.\n</think>\n\nParis.", Reply{Reasoning: "Let me think.", Answer: "Paris."}},
		{"streaming inside", "<think>\nHmm, the capi", Reply{Reasoning: "Hmm, the capi", Thinking: true}},
		{"streaming partial close", "<think>\nHmm.</thi", Reply{Reasoning: "Hmm.", Thinking: true}},
		{"streaming partial open", "<thi", Reply{Thinking: true}},
		{"tag later is text", "Use <think> tags like <think>x</think>.", Reply{Answer: "Use <think> tags like <think>x</think>."}},
		{"answer mentions close tag only after text with open", "a <think> b </think> c", Reply{Answer: "a <think> b </think> c"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := SplitReasoning(c.in); got != c.want {
				t.Errorf("SplitReasoning(%q) = %+v, want %+v", c.in, got, c.want)
			}
		})
	}
}

// Streaming: every prefix of a reply splits without the answer ever
// showing reasoning text, and the last prefix gives the full split.
func TestSplitReasoningEveryPrefix(t *testing.T) {
	full := "<think>\nStep one. Step two.\n</think>\n\nThe answer is 42."
	for i := 0; i <= len(full); i++ {
		r := SplitReasoning(full[:i])
		if strings.Contains(r.Answer, "Step") || strings.Contains(r.Answer, "<") {
			t.Fatalf("prefix %q: answer %q shows reasoning or a tag", full[:i], r.Answer)
		}
		if strings.Contains(r.Reasoning, "<") {
			t.Fatalf("prefix %q: reasoning %q holds part of a tag", full[:i], r.Reasoning)
		}
	}
	if r := SplitReasoning(full); r.Answer != "The answer is 42." || r.Reasoning != "Step one. Step two." || r.Thinking {
		t.Fatalf("full reply: %+v", r)
	}
}

func FuzzSplitReasoning(f *testing.F) {
	for _, s := range []string{"", "<think>", "</think>", "<think>a</think>b", "x</think>y", "<thi", "<think>a</thi"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := SplitReasoning(s)
		if len(r.Reasoning)+len(r.Answer) > len(s) {
			t.Fatalf("%q: split longer than the reply: %+v", s, r)
		}
		if r.Thinking && r.Answer != "" {
			t.Fatalf("%q: an answer while still thinking: %+v", s, r)
		}
	})
}
