package chat

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/minfer/minfer/internal/ggtest"
)

func TestScreenRefusesTemplatesThatCouldKillTheProcess(t *testing.T) {
	for _, src := range []string{
		"{{ 'a' * 10**10 }}",
		"{{ 'a' * 100000000000 }}",
	} {
		if _, err := NewTemplate(src, "<s>", "</s>"); !errors.Is(err, ErrTemplate) {
			t.Errorf("%q: %v, want a refusal", src, err)
		}
	}
	// Every real template in the test data passes the screen.
	files := ggtest.Glob(t, "templates", "*.jinja")
	if len(files) == 0 {
		t.Fatal("no templates")
	}
	for _, f := range files {
		src, _ := os.ReadFile(f)
		if err := screen(string(src)); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}
