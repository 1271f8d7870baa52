package core

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/coretest"
	"github.com/minfer/minfer/internal/ggtest"
)

// TestDamagedTokenizerIsOneClearProblem: every damaged copy is either
// refused by Inspect and Load with one message naming the damage, or
// tolerated as llama.cpp tolerates it with a session that generates. Each
// case stays within a bounded allocation.
func TestDamagedTokenizerIsOneClearProblem(t *testing.T) {
	src := ggtest.Path(t, "models", "stories260K.gguf")
	for _, tc := range coretest.DamagedTokenizers() {
		t.Run(tc.Name, func(t *testing.T) {
			path := coretest.Rewrite(t, src, tc.Edit)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			info, err := Inspect(path)
			if err != nil {
				t.Fatalf("Inspect: %v (a damaged tokenizer is a Problem on a readable card)", err)
			}
			s, loadErr := Load(context.Background(), path, cpuOnly(), nil)
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("inspect + load allocated %d MiB", alloc>>20)
			}
			t.Logf("inspect + load: %v; problem %q; template %q", elapsed, info.Problem, info.TemplateProblem)
			if tc.Problem != "" {
				if !strings.Contains(info.Problem, tc.Problem) {
					t.Errorf("Problem %q, want it to say %q", info.Problem, tc.Problem)
				}
				if loadErr == nil {
					s.Close()
					t.Fatal("Load succeeded")
				}
				if !strings.Contains(loadErr.Error(), tc.Problem) || strings.Count(loadErr.Error(), tc.Problem) != 1 {
					t.Errorf("Load: %v, want one mention of %q", loadErr, tc.Problem)
				}
				return
			}
			if info.Problem != "" {
				t.Fatalf("Problem %q for damage that is tolerated", info.Problem)
			}
			if !strings.Contains(info.TemplateProblem, tc.Template) || (tc.Template == "") != (info.TemplateProblem == "") {
				t.Errorf("TemplateProblem %q, want it to say %q", info.TemplateProblem, tc.Template)
			}
			if loadErr != nil {
				t.Fatal(loadErr)
			}
			defer s.Close()
			conv, _, err := s.Conversation()
			if err != nil {
				t.Fatal(err)
			}
			opts := greedy()
			opts.MaxTokens = 8
			text, st, err := conv.Complete(context.Background(), "Once upon a time", opts, func(chat.Event) {})
			if err != nil || st.Generated == 0 {
				t.Fatalf("Complete: %q, %+v, %v", text, st, err)
			}
		})
	}
}

// TestOutOfRangeSpecialIDsKeepTheDefaults: BOS/EOS ids pointing nowhere
// fall back to the SPM defaults, so the reference greedy text is unchanged.
func TestOutOfRangeSpecialIDsKeepTheDefaults(t *testing.T) {
	ref := loadRef(t, ggtest.Path(t, "models", "stories260K.ref.json"))
	var edit func(*gguf.File, *gguf.Builder) error
	for _, tc := range coretest.DamagedTokenizers() {
		if tc.Name == "BOS and EOS ids out of range" {
			edit = tc.Edit
		}
	}
	path := coretest.Rewrite(t, ggtest.Path(t, "models", "stories260K.gguf"), edit)
	s, err := Load(context.Background(), path, cpuOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conv, _, err := s.Conversation()
	if err != nil {
		t.Fatal(err)
	}
	c := ref.Cases[0]
	opts := greedy()
	opts.MaxTokens = len(c.Greedy)
	text, _, err := conv.Complete(context.Background(), c.Prompt, opts, func(chat.Event) {})
	if err != nil {
		t.Fatal(err)
	}
	if text != c.GreedyText {
		t.Errorf("got %q, want %q", text, c.GreedyText)
	}
}
