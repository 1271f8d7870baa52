package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minfer/minfer/internal/ggtest"
)

type toolsCase struct {
	Template            string          `json:"template"`
	Conversation        string          `json:"conversation"`
	Messages            []Message       `json:"messages"`
	Tools               json.RawMessage `json:"tools"`
	AddGenerationPrompt bool            `json:"add_generation_prompt"`
	Expected            *string         `json:"expected"`
	Error               string          `json:"error"`
}

// Every case of tools.json renders exactly as Python jinja2 renders it, and
// the cases where Python raised fail.
func TestToolTemplatesMatchPythonJinja(t *testing.T) {
	dir := ggtest.Path(t, "templates")
	raw, err := os.ReadFile(filepath.Join(dir, "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []toolsCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("tools.json: %v", err)
	}
	if len(doc.Cases) != 72 {
		t.Fatalf("tools.json has %d cases, want 72", len(doc.Cases))
	}
	for _, c := range doc.Cases {
		name := fmt.Sprintf("%s/%s/gen=%v", c.Template, c.Conversation, c.AddGenerationPrompt)
		t.Run(name, func(t *testing.T) {
			tmpl, err := NewTemplate(readTemplate(t, dir, c.Template), "<s>", "</s>")
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			tmpl.SetClock(func() time.Time { return fixedNow })
			got, err := tmpl.RenderWithTools(c.Messages, c.Tools, c.AddGenerationPrompt)
			if c.Error != "" {
				if err == nil {
					t.Fatalf("Python raised %q; we rendered:\n%q", c.Error, got)
				}
				if !errors.Is(err, ErrTemplate) {
					t.Errorf("error %v does not wrap ErrTemplate", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if got != *c.Expected {
				t.Errorf("render mismatch: %s", firstDiff(got, *c.Expected))
			}
		})
	}
}

// firstDiff shows where two renders part, with a little context.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-60)
	return fmt.Sprintf("at byte %d\n got: %q\nwant: %q", i, got[from:min(len(got), i+100)], want[from:min(len(want), i+100)])
}
