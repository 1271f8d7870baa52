package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzChatStoreRead: whatever bytes a conversation file holds, List and
// Load either read a conversation (which saves and reads back the same)
// or move the file aside and say so; never a panic, never a file left in
// place that fails again.
func FuzzChatStoreRead(f *testing.F) {
	const id = "20250101-000000-abcdef"
	f.Add([]byte(`{"id":"` + id + `","title":"t","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello","stats":{"generated":3}}]}`))
	f.Add([]byte(`{"id":"` + id + `","messages":[]}`))
	f.Add([]byte(`{"id":"other"}`))
	f.Add([]byte(`{"id":"` + id + `","messages":[{"role":"wizard"}]}`))
	f.Add([]byte(`{"id":"` + id + `","updated":"not a time"}`))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := NewChatStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(s.Dir, id+".json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		list, damaged, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		if len(list)+len(damaged) != 1 {
			t.Fatalf("list %+v, damaged %+v: want the file in one of them", list, damaged)
		}
		c, err := s.Load(id)
		if len(damaged) == 1 {
			if !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a file set aside still loads: %v", err)
			}
			if !strings.Contains(damaged[0].Path, ".damaged-") {
				t.Fatalf("damaged %+v", damaged[0])
			}
			return
		}
		if err != nil {
			t.Fatalf("listed, but Load: %v", err)
		}
		if err := s.Save(c); err != nil {
			t.Fatal(err)
		}
		again, err := s.Load(id)
		if err != nil || again.ID != c.ID || len(again.Messages) != len(c.Messages) {
			t.Fatalf("save and read back: %+v, %v", again, err)
		}
	})
}
