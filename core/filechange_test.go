package core

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/ggtest"
)

// storiesCopy is a private copy of stories260K that a test may damage.
func storiesCopy(t *testing.T) string { return modelCopy(t, "models", "stories260K.gguf") }

// modelCopy is a private copy of a test model (dir/file of the test data)
// that a test may damage.
func modelCopy(t *testing.T, dir, file string) string {
	t.Helper()
	b, err := os.ReadFile(ggtest.Path(t, dir, file))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func loadCopy(t *testing.T, path string, threads int, cpuWeights string) (*Session, *chat.Conversation) {
	t.Helper()
	o := cpuOnly()
	o.Threads = threads
	o.CPUWeights = cpuWeights
	s, err := Load(context.Background(), path, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	conv, _, err := s.Conversation()
	if err != nil {
		t.Fatal(err)
	}
	return s, conv
}

func complete(conv *chat.Conversation, prompt string) (string, error) {
	opts := greedy()
	opts.MaxTokens = 8
	text, _, err := conv.Complete(context.Background(), prompt, opts, func(chat.Event) {})
	return text, err
}

// TestModelFileChangedUnderASession: a file that shrinks or is rewritten
// while loaded is noticed before the next step reads the weights, and
// every later step says so; a file removed from the folder is no change
// (the mapping keeps it), and the session goes on.
func TestModelFileChangedUnderASession(t *testing.T) {
	cases := []struct {
		name   string
		change func(path string) error
		reason string // "" : no change
	}{
		{"truncated", func(p string) error { return os.Truncate(p, 4096) }, "went from 1185376 to 4096 bytes"},
		{"emptied", func(p string) error { return os.Truncate(p, 0) }, "to 0 bytes"},
		{"rewritten in place", func(p string) error {
			later := time.Now().Add(time.Hour)
			return os.Chtimes(p, later, later)
		}, "rewritten"},
		{"removed", os.Remove, ""},
		{"replaced by rename", func(p string) error {
			other := p + ".new"
			if err := os.WriteFile(other, []byte("not a model"), 0o644); err != nil {
				return err
			}
			return os.Rename(other, p)
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := storiesCopy(t)
			s, conv := loadCopy(t, path, 2, "")
			want, err := complete(conv, "Once upon a time")
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.change(path); err != nil {
				t.Fatal(err)
			}
			conv.Reset()
			got, err := complete(conv, "Once upon a time")
			if tc.reason == "" {
				if err != nil || got != want {
					t.Fatalf("after %s: %q, %v; want %q", tc.name, got, err, want)
				}
				return
			}
			var fc *FileChangedError
			if !errors.Is(err, ErrModelFileChanged) || !errors.As(err, &fc) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("after %s: %q, %v; want %v saying %q", tc.name, got, err, ErrModelFileChanged, tc.reason)
			}
			t.Log(err)
			if _, err := s.Eval(context.Background(), []int32{1}, false); !errors.Is(err, ErrModelFileChanged) {
				t.Errorf("the next step: %v, want the same error", err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// TestFaultOnATruncatedMappingIsAnError: with the size check out of the
// way (a change between the check and the read), reading weights past the
// file's new end faults; on the session's goroutine and on the CPU pool's
// workers alike the fault is the FileChangedError, not SIGBUS ending the
// process. (Weights used from the mapping: copied weights do not read the
// file after the load — TestCopiedWeightsOutliveTheFile.)
func TestFaultOnATruncatedMappingIsAnError(t *testing.T) {
	for _, threads := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d threads", threads), func(t *testing.T) {
			path := storiesCopy(t)
			s, conv := loadCopy(t, path, threads, "map")
			if _, err := complete(conv, "Once upon a time"); err != nil {
				t.Fatal(err)
			}
			s.stamp = nil // no stat check: the read itself must be safe
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
			conv.Reset()
			_, err := complete(conv, "The quick brown fox")
			if !errors.Is(err, ErrModelFileChanged) || !strings.Contains(err.Error(), "faulted") {
				t.Fatalf("got %v, want %v from a fault", err, ErrModelFileChanged)
			}
			t.Log(err)
			if _, err := s.Eval(context.Background(), []int32{1}, false); !errors.Is(err, ErrModelFileChanged) {
				t.Errorf("the next step: %v, want the same error", err)
			}
			// Loading the file again is refused with what is wrong with it.
			if _, err := Load(context.Background(), path, cpuOnly(), nil); err == nil {
				t.Errorf("the emptied file loads")
			}
		})
	}
}

// TestCopiedWeightsOutliveTheFile: weights the CPU copied into memory are
// the load's own: with the size check out of the way, truncating the file
// after the load changes nothing the session computes (same text as
// before), and a file truncated before the load is still refused.
func TestCopiedWeightsOutliveTheFile(t *testing.T) {
	path := storiesCopy(t)
	s, conv := loadCopy(t, path, 2, "copy")
	want, err := complete(conv, "Once upon a time")
	if err != nil {
		t.Fatal(err)
	}
	s.stamp = nil
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	conv.Reset()
	got, err := complete(conv, "Once upon a time")
	if err != nil || got != want {
		t.Fatalf("after the truncation: %q, %v; want %q", got, err, want)
	}
	if _, err := Load(context.Background(), path, cpuOnly(), nil); err == nil {
		t.Fatal("loading the truncated file again: no error")
	}
}

// TestFileCheckAfterTheGate: a decode step whose queued run is taken
// checks the file after opening the gate (the run reads no mapped weight;
// the device idles less between steps): a file rewritten before it fails
// that step with ErrModelFileChanged, the queued run taken and finished,
// and every later step; a prompt step with a queued run pending checks
// first and leaves the queued run to Close.
func TestFileCheckAfterTheGate(t *testing.T) {
	path := modelCopy(t, "small", "synth-llama-small-Q4_0.gguf")
	info, err := Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tokens := range [][]int32{{7}, {7, 8, 9}} {
		t.Run(fmt.Sprintf("%d tokens", len(tokens)), func(t *testing.T) {
			if err := os.Chtimes(path, time.Now(), time.Now()); err != nil {
				t.Fatal(err)
			}
			dev := gateGPU{newFakeGPU(t, 1, 0), &gateState{}}
			s := loadGated(t, path, info, dev.fakeGPU, dev)
			for _, step := range [][]int32{{1, 2, 3}, {4}, {5}} {
				if _, err := s.Eval(ctx, step, false); err != nil {
					t.Fatal(err)
				}
			}
			if !dev.st.pending || s.pl.pre.g == nil {
				t.Fatal("no step queued after a decode step")
			}
			used := s.pl.used
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(path, later, later); err != nil {
				t.Fatal(err)
			}
			_, err := s.Eval(ctx, tokens, false)
			if !errors.Is(err, ErrModelFileChanged) {
				t.Fatalf("after a rewrite: %v, want %v", err, ErrModelFileChanged)
			}
			taken := s.pl.used - used
			if len(tokens) == 1 && (taken != 1 || dev.st.pending || s.pl.pre.g != nil) {
				t.Errorf("decode step: queued runs taken %d (want 1), still pending %v", taken, dev.st.pending)
			}
			for b := 0; len(tokens) == 1 && b < s.ga.NumBackends(); b++ {
				if r := s.ga.MemoryReport(b); r.LiveBytes != 0 {
					t.Errorf("decode step: %s holds %d bytes of the failed step's buffers", r.Backend, r.LiveBytes)
				}
			}
			if len(tokens) > 1 && (taken != 0 || !dev.st.pending) {
				t.Errorf("prompt step: queued runs taken %d (want 0: checked first), pending %v (want true)", taken, dev.st.pending)
			}
			if s.nPast != 0 || s.pl.lateCheck {
				t.Errorf("after the failed step: position %d (want 0: nothing cached is trusted), a late check still pending %v", s.nPast, s.pl.lateCheck)
			}
			if _, err := s.Eval(ctx, []int32{1}, false); !errors.Is(err, ErrModelFileChanged) {
				t.Errorf("the next step: %v, want the same error", err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if dev.st.pending {
				t.Error("a queued run still pending after Close")
			}
		})
	}
}
