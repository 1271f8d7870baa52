package app

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestChatStoreRoundTrip(t *testing.T) {
	s, err := NewChatStore(filepath.Join(t.TempDir(), "chats"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	a := &Chat{ID: NewChatID(t0), Title: "Haiku about memory", System: "Be brief.", Model: "/m/x.gguf", Created: t0, Updated: t0,
		Messages: []ChatMessage{
			{Role: "user", Content: "Write a haiku\nabout budgets."},
			{Role: "assistant", Content: "Three quarters held fast, …", Note: "stopped",
				Stats: &ReplyStats{PromptTokens: 20, Generated: 12, GenRate: 38.5, StopReason: "cancelled", CtxUsed: 32, CtxLen: 4096}},
		}}
	b := &Chat{ID: NewChatID(t0.Add(time.Hour)), Title: "Trip plan", Created: t0, Updated: t0.Add(time.Hour),
		Messages: []ChatMessage{{Role: "user", Content: "Plan a trip"}}}
	for _, c := range []*Chat{a, b} {
		if err := s.Save(c); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("load", func(t *testing.T) {
		got, err := s.Load(a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, a) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, a)
		}
	})
	t.Run("list newest first", func(t *testing.T) {
		list, damaged, err := s.List()
		if err != nil || len(damaged) != 0 {
			t.Fatal(err, damaged)
		}
		if len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID || list[1].Title != a.Title {
			t.Errorf("list = %+v", list)
		}
	})
	t.Run("overwrite leaves no temporary files", func(t *testing.T) {
		a.Messages = append(a.Messages, ChatMessage{Role: "user", Content: "again"})
		if err := s.Save(a); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(s.Dir)
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".json") {
				t.Errorf("left behind: %s", e.Name())
			}
		}
		got, _ := s.Load(a.ID)
		if len(got.Messages) != 3 {
			t.Errorf("overwrite kept %d messages, want 3", len(got.Messages))
		}
	})
	t.Run("bad ids", func(t *testing.T) {
		for _, id := range []string{"", "../x", "a/b", "x.y"} {
			if _, err := s.Load(id); !errors.Is(err, ErrBadChatID) {
				t.Errorf("Load(%q) = %v, want ErrBadChatID", id, err)
			}
		}
	})
}

func TestChatStoreSetsDamagedFilesAside(t *testing.T) {
	cases := []struct {
		name, file, content, problem string
	}{
		{"truncated JSON", "20250101-000000-aaaaaa.json", `{"id": "20250101-000000-aaaaaa", "messages": [{"role": "us`, "not a conversation"},
		{"not JSON", "20250101-000000-bbbbbb.json", "\x00\x01binary", "not a conversation"},
		{"id does not match the name", "20250101-000000-cccccc.json", `{"id": "someone-else", "messages": []}`, `holds conversation id "someone-else"`},
		{"unknown role", "20250101-000000-dddddd.json", `{"id": "20250101-000000-dddddd", "messages": [{"role": "wizard", "content": "hi"}]}`, `role "wizard"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewChatStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			good := &Chat{ID: "20250101-000000-ffffff", Messages: []ChatMessage{{Role: "user", Content: "ok"}}}
			if err := s.Save(good); err != nil {
				t.Fatal(err)
			}
			bad := filepath.Join(s.Dir, tc.file)
			if err := os.WriteFile(bad, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			list, damaged, err := s.List()
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || list[0].ID != good.ID {
				t.Errorf("list = %+v, want only the good chat", list)
			}
			if len(damaged) != 1 {
				t.Fatalf("damaged = %+v, want one", damaged)
			}
			d := damaged[0]
			if !strings.HasPrefix(d.Path, bad+".damaged-") || !strings.Contains(d.Problem, tc.problem) {
				t.Errorf("damaged = %+v, want %s.damaged-… naming %q", d, bad, tc.problem)
			}
			if _, err := os.Stat(bad); !os.IsNotExist(err) {
				t.Errorf("the damaged file is still in place")
			}
			kept, err := os.ReadFile(d.Path)
			if err != nil || string(kept) != tc.content {
				t.Errorf("set-aside file holds %q (%v), want the original bytes", kept, err)
			}
			// Listed once, reported once: the next List is clean.
			if _, damaged, _ := s.List(); len(damaged) != 0 {
				t.Errorf("second List reported %+v again", damaged)
			}
		})
	}
	t.Run("load of a damaged file", func(t *testing.T) {
		s, _ := NewChatStore(t.TempDir())
		p := filepath.Join(s.Dir, "20250101-000000-eeeeee.json")
		os.WriteFile(p, []byte("{"), 0o644)
		_, err := s.Load("20250101-000000-eeeeee")
		var dmg *DamagedChatError
		if !errors.As(err, &dmg) || !strings.Contains(dmg.File.Path, ".damaged-") {
			t.Fatalf("Load = %v, want a DamagedChatError naming the new place", err)
		}
	})
}

func TestChatTitle(t *testing.T) {
	cases := []struct {
		name string
		msgs []ChatMessage
		want string
	}{
		{"empty", nil, "New chat"},
		{"first user message", []ChatMessage{{Role: "user", Content: "  Write a\nhaiku  "}}, "Write a haiku"},
		{"long", []ChatMessage{{Role: "user", Content: strings.Repeat("word ", 20)}}, strings.Repeat("word ", 8)[:39] + "…"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := chatTitle(tc.msgs); got != tc.want {
				t.Errorf("chatTitle = %q, want %q", got, tc.want)
			}
		})
	}
}
