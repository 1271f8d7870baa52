package chat

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/minfer/minfer/core/tokenizer"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/ggtest"
	"github.com/minfer/minfer/internal/jinja"
)

// The hostile templates of issue #15, as a model file could ship them. Each
// used to end the process (stack overflow) or grow without bound; now the
// render fails with the engine's limit, in bounded memory.
var hostileTemplates = map[string]string{
	"unbounded recursion": `{% macro f(n) %}{{ f(n+1) }}{% endmacro %}{{ f(0) }}`,
	"huge loop":           `{% for i in range(1000000) %}{% for j in range(1000000) %}{{ messages[0].content }}{% endfor %}{% endfor %}`,
	"string doubling":     `{% set ns = namespace(s=messages[0].content) %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}`,
	"power of ten":        `{{ 'a' * 10**10 }}`,
	"big literal":         `{{ 'a' * 100000000000 }}`,
}

func TestHostileTemplatesFailWithinLimits(t *testing.T) {
	msgs := []Message{{Role: "user", Content: "Hello."}}
	for name, src := range hostileTemplates {
		t.Run(name, func(t *testing.T) {
			tmpl, err := NewTemplate(src, "<s>", "</s>")
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			out, err := tmpl.Render(msgs, true)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTemplate) || !errors.Is(err, jinja.ErrLimit) {
				t.Fatalf("render = %d bytes, %v; want a limit error", len(out), err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 512<<20 {
				t.Errorf("render allocated %d MiB", alloc>>20)
			}
			// ForModel refuses it (the probe fails) and offers the family's
			// built-in, saying why.
			got, src := ForModel(src, "llama 3.1", "<s>", "</s>")
			if got == nil || !got.IsBuiltin() || got.Family() != FamilyLlama3 || src.Kind != SourceBuiltin {
				t.Fatalf("ForModel = %v, want the built-in llama-3 template", src)
			}
			if !strings.Contains(src.String(), "this model's chat template cannot be used") || !errors.Is(src.ModelErr, jinja.ErrLimit) {
				t.Errorf("Source = %q", src)
			}
		})
	}
}

// A template that renders the probe but breaks on a longer conversation:
// the conversation reports "this model's chat template …" with the built-in
// family to use, and UseBuiltin switches to it.
func TestConversationOffersBuiltinWhenModelTemplateFails(t *testing.T) {
	f, err := gguf.Open(ggtest.Path(t, "vocab", "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(&f.Meta)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	src := `{% macro f(n) %}{{ f(n+1) }}{% endmacro %}` +
		`{% if messages|length > 3 %}{{ f(0) }}{% endif %}` +
		`{% for m in messages %}[{{ m.role }}] {{ m.content }}{% endfor %}`
	tmpl, source := ForModel(src, "llama 3.1", "<s>", "</s>")
	if source.Kind != SourceModel {
		t.Fatalf("ForModel = %v, want the model's template", source)
	}
	c := NewConversation(noEval{}, tok, tmpl)
	short := []Message{{Role: "user", Content: "a"}}
	if _, err := c.Prompt(short); err != nil {
		t.Fatalf("short conversation: %v", err)
	}
	long := []Message{{Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}, {Role: "user", Content: "c"}, {Role: "assistant", Content: "d"}, {Role: "user", Content: "e"}}
	_, err = c.Prompt(long)
	var mte *ModelTemplateError
	if !errors.As(err, &mte) || mte.Fallback != FamilyLlama3 || !errors.Is(err, jinja.ErrLimit) {
		t.Fatalf("long conversation: %v, want a ModelTemplateError offering llama-3", err)
	}
	if !strings.HasPrefix(err.Error(), "this model's chat template") {
		t.Errorf("message %q", err)
	}
	if err := c.UseBuiltin(mte.Fallback); err != nil {
		t.Fatal(err)
	}
	if !c.Template().IsBuiltin() {
		t.Fatal("UseBuiltin kept the model's template")
	}
	if _, err := c.Prompt(long); err != nil {
		t.Fatalf("with the built-in template: %v", err)
	}
}
