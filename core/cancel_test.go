package core

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/coretest"
	"github.com/minfer/minfer/internal/ggtest"
)

// TestCancelAtRandomPointsLeavesNoTraces cancels generation 1000 times
// (20 with -short, which CI runs under the race detector) at random
// points (a deadline of a random number of microseconds, landing in the
// prefill or the decode, or from the stream after a random number of
// tokens), over chat turns and plain completions.
// After each: no goroutine is left behind, and the next reply from the
// same session equals a fresh session's reply (the KV cache and the
// conversation's cached prefix are intact).
func TestCancelAtRandomPointsLeavesNoTraces(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 20
	}
	path := coretest.WithChatML(t, ggtest.Path(t, "models", "stories260K.gguf"))
	open := func() (*Session, *chat.Conversation) {
		o := cpuOnly()
		o.Threads = 3 // the pool's workers are part of the count
		o.Ctx = 256
		s, err := Load(context.Background(), path, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		conv, _, err := s.Conversation()
		if err != nil {
			t.Fatal(err)
		}
		return s, conv
	}
	check := []chat.Message{{Role: "user", Content: "Tell me about the little dog."}}
	opts := greedy()
	opts.MaxTokens = 4

	fresh, freshConv := open()
	want, _, err := freshConv.Reply(context.Background(), check, opts, func(chat.Event) {})
	fresh.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, conv := open()
	defer s.Close()
	base := runtime.NumGoroutine()
	rng := rand.New(rand.NewPCG(1, 2))
	long := opts
	long.MaxTokens = 16
	cancelled := 0
	for i := 0; i < n; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		if i%2 == 0 {
			ctx, cancel = context.WithTimeout(context.Background(), time.Duration(rng.IntN(1500))*time.Microsecond)
		}
		stopAt := rng.IntN(16)
		tokens := 0
		emit := func(chat.Event) {
			tokens++
			if i%2 == 1 && tokens == stopAt {
				cancel()
			}
		}
		var st chat.Stats
		if i%3 == 0 {
			_, st, err = conv.Complete(ctx, fmt.Sprintf("Once upon a time %d", i), long, emit)
		} else {
			msgs := []chat.Message{{Role: "user", Content: fmt.Sprintf("Story number %d, please.", i)}}
			_, st, err = conv.Reply(ctx, msgs, long, emit)
		}
		cancel()
		if err != nil && ctx.Err() == nil {
			t.Fatalf("iteration %d: %v", i, err)
		}
		if st.StopReason == chat.StopCancelled || err != nil {
			cancelled++
		}
		got, _, err := conv.Reply(context.Background(), check, opts, func(chat.Event) {})
		if err != nil {
			t.Fatalf("iteration %d: the reply after the cancel: %v", i, err)
		}
		if got != want {
			t.Fatalf("iteration %d (cancelled after %d tokens, %+v): got %q, a fresh session %q", i, tokens, st, got, want)
		}
		if g := settledGoroutines(base); g > base {
			buf := make([]byte, 1<<16)
			t.Fatalf("iteration %d: %d goroutines, %d before:\n%s", i, g, base, buf[:runtime.Stack(buf, true)])
		}
	}
	t.Logf("%d runs, %d cancelled mid-way", n, cancelled)
	if cancelled < n/4 {
		t.Errorf("only %d of %d runs were cancelled: the points are not random enough", cancelled, n)
	}
}

// settledGoroutines waits up to a second for the count to fall to base.
func settledGoroutines(base int) int {
	deadline := time.Now().Add(time.Second)
	for {
		g := runtime.NumGoroutine()
		if g <= base || time.Now().After(deadline) {
			return g
		}
		time.Sleep(time.Millisecond)
	}
}
