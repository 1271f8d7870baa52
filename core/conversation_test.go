package core

import (
	"context"
	"strings"
	"testing"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/ggtest"
)

func stories(t *testing.T, ctx int) *Session {
	t.Helper()
	o := cpuOnly()
	o.Ctx = ctx
	s, err := Load(context.Background(), ggtest.Path(t, "models", "stories260K.gguf"), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func greedy() chat.GenOptions {
	return chat.GenOptions{Sampler: chat.GreedySamplerSettings()}
}

// TestCompletionMatchesReferenceGreedyText: plain completion of the
// reference prompt reproduces llama.cpp's greedy text.
func TestCompletionMatchesReferenceGreedyText(t *testing.T) {
	ref := loadRef(t, ggtest.Path(t, "models", "stories260K.ref.json"))
	s := stories(t, 0)
	conv, src, err := s.Conversation()
	if err != nil {
		t.Fatal(err)
	}
	if conv.Template() != nil {
		t.Fatalf("stories260K has no chat template, got %v", src)
	}
	for _, c := range ref.Cases {
		conv.Reset()
		opts := greedy()
		opts.MaxTokens = len(c.Greedy)
		var streamed strings.Builder
		text, st, err := conv.Complete(context.Background(), c.Prompt, opts, func(ev chat.Event) { streamed.WriteString(ev.Text) })
		if err != nil {
			t.Fatal(err)
		}
		if text != c.GreedyText || streamed.String() != text {
			t.Errorf("prompt %q:\n got %q\nstreamed %q\nwant %q", c.Prompt, text, streamed.String(), c.GreedyText)
		}
		if st.PromptTokens != len(c.Tokens) || st.Generated != len(c.Greedy) || st.StopReason != chat.StopMaxTokens {
			t.Errorf("stats %+v, want %d prompt tokens, %d generated", st, len(c.Tokens), len(c.Greedy))
		}
	}
}

// TestSecondTurnPrefillsOnlyNewTokens: the KV cache keeps the common
// prefix, so the second turn evaluates only what the first did not cover.
func TestSecondTurnPrefillsOnlyNewTokens(t *testing.T) {
	s := stories(t, 512)
	tok, err := s.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chat.Builtin("chatml", tok.TokenText(tok.BOS()), tok.TokenText(tok.EOS()))
	if err != nil {
		t.Fatal(err)
	}
	conv := chat.NewConversation(s, tok, tmpl)
	opts := greedy()
	opts.MaxTokens = 12
	msgs := []chat.Message{{Role: "system", Content: "Tell stories."}, {Role: "user", Content: "Once upon a time"}}
	reply, st1, err := conv.Reply(context.Background(), msgs, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st1.ReusedTokens != 0 || st1.PrefillTokens != st1.PromptTokens {
		t.Errorf("first turn %+v: want everything prefilled", st1)
	}
	msgs = append(msgs, chat.Message{Role: "assistant", Content: reply}, chat.Message{Role: "user", Content: "The end."})
	_, st2, err := conv.Reply(context.Background(), msgs, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("turn 1: %d prompt tokens, %d prefilled; turn 2: %d prompt tokens, %d reused, %d prefilled",
		st1.PromptTokens, st1.PrefillTokens, st2.PromptTokens, st2.ReusedTokens, st2.PrefillTokens)
	if st2.ReusedTokens < st1.PromptTokens {
		t.Errorf("turn 2 reused %d tokens, want at least the %d of turn 1's prompt", st2.ReusedTokens, st1.PromptTokens)
	}
	if st2.PrefillTokens+st2.ReusedTokens != st2.PromptTokens || st2.PrefillTokens >= st2.PromptTokens-st1.PromptTokens+1 {
		t.Errorf("turn 2 prefilled %d of %d tokens; only the new ones should be", st2.PrefillTokens, st2.PromptTokens)
	}
}

// TestStopStringCancelAndMaxTokens covers the loop's other exits.
func TestStopStringCancelAndMaxTokens(t *testing.T) {
	s := stories(t, 0)
	conv, _, err := s.Conversation()
	if err != nil {
		t.Fatal(err)
	}
	opts := greedy()
	opts.Stop = []string{"Lily"}
	text, st, err := conv.Complete(context.Background(), "Once upon a time", opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.StopReason != chat.StopString || text != ", there was a little girl named " {
		t.Errorf("stop string: %q (%s)", text, st.StopReason)
	}
	// Cancel after the third token: the loop returns within one token.
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	text, st, err = conv.Complete(ctx, "Once upon a time", greedy(), func(ev chat.Event) {
		if n++; n == 3 {
			cancel()
		}
	})
	if err != nil || st.StopReason != chat.StopCancelled || st.Generated > 4 {
		t.Errorf("cancel: err %v, %+v, text %q", err, st, text)
	}
	// The session is still usable and reuses the prompt from the cache.
	opts = greedy()
	opts.MaxTokens = 5
	_, st, err = conv.Complete(context.Background(), "Once upon a time", opts, nil)
	if err != nil || st.Generated != 5 || st.StopReason != chat.StopMaxTokens || st.ReusedTokens == 0 {
		t.Errorf("after cancel: err %v, %+v", err, st)
	}
}

// TestOldTurnsDroppedWhenContextOutgrown: the system prompt stays, the
// oldest turns go, and the caller is told how many.
func TestOldTurnsDroppedWhenContextOutgrown(t *testing.T) {
	s := stories(t, 128)
	tok, _ := s.Tokenizer()
	tmpl, _ := chat.Builtin("chatml", tok.TokenText(tok.BOS()), tok.TokenText(tok.EOS()))
	conv := chat.NewConversation(s, tok, tmpl)
	msgs := []chat.Message{{Role: "system", Content: "Be brief."}}
	long := strings.Repeat("The cat sat on the mat. ", 4)
	for i := 0; i < 6; i++ {
		msgs = append(msgs, chat.Message{Role: "user", Content: long}, chat.Message{Role: "assistant", Content: long})
	}
	msgs = append(msgs, chat.Message{Role: "user", Content: "Hi"})
	opts := greedy()
	opts.MaxTokens = 8
	_, st, err := conv.Reply(context.Background(), msgs, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.DroppedMessages == 0 || st.PromptTokens > 128-32 {
		t.Errorf("%+v: want old turns dropped to leave a quarter of 128 free", st)
	}
	// A single message longer than the context is an error, not a crash.
	_, _, err = conv.Reply(context.Background(), []chat.Message{{Role: "user", Content: strings.Repeat(long, 10)}}, opts, nil)
	if err == nil {
		t.Error("a prompt longer than the context was accepted")
	}
}
