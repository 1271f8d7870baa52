package chat

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/minfer/minfer/internal/ggtest"
	"github.com/minfer/minfer/internal/jinja"
)

// FuzzTemplateRender renders arbitrary template sources with the engine's
// limits on: every input ends in an error or a render, never a panic, a
// stack overflow or unbounded memory (the limits make a skip list of
// "resource hogs" unnecessary).
func FuzzTemplateRender(f *testing.F) {
	for _, file := range ggtest.Glob(f, "templates", "*.jinja") {
		if src, err := os.ReadFile(file); err == nil {
			f.Add(string(src))
		}
	}
	for _, name := range BuiltinNames() {
		f.Add(builtinSources[name])
	}
	for _, src := range []string{
		"", "{{", "{%", "{#", "{{ }}", "{% if %}", "{% endif %}", "{%- raw -%}{{ x }}{% endraw %}",
		"{% for m in messages %}{{ m.content }}\n{% endfor %}",
		"{{ messages[0]['content'][::-1] }}", "{{ messages[5].role }}", "{{ x.y.z() }}",
		"{% set ns = namespace(a=1) %}{% set ns.a = ns.a + 1 %}{{ ns.a }}",
		"{{ raise_exception('x') }}", "{{ strftime_now('%Y') }}", "{{ range(3) | list }}",
		"{% macro m(a, b=2) %}{{ a ~ b }}{% endmacro %}{{ m(1) }}",
		"{{ tools | tojson(indent=2) }}", "{{ '\\'' + \"\\\"\" }}", "{{ 1 / 0 }}{{ 1 // 0 }}{{ 1 % 0 }}",
		"{% for a, b in messages %}{% endfor %}", "{{ messages | map(attribute='role') | join(',') }}",
		"{% macro f(n) %}{{ f(n+1) }}{% endmacro %}{{ f(0) }}", "{{ 'a' * 10**10 }}",
		"{% set ns = namespace(s='ab') %}{% for i in range(99) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
		"{% for i in range(999999) %}{% for j in range(999999) %}{% endfor %}{% endfor %}",
		"{% set l = [1] %}{% set _ = l.append(l) %}{{ l|tojson }}{{ l }}",
	} {
		f.Add(src)
	}
	toolRoundTrip := []Message{
		{Role: "user", Content: "q"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Type: "function", Function: FunctionCall{Name: "f", Arguments: `{"x":"y"}`}}}},
		{Role: "tool", ToolCallID: "c1", Name: "f", Content: "r"},
	}
	msgs := []Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u\n"}, {Role: "assistant", Content: " a"}, {Role: "tool", Content: "{}"}}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1<<14 {
			t.Skip()
		}
		// The rewrite must be stable: a second pass finds nothing to do.
		once := separateAdjacentTags(normalizeLineBreaks(src))
		if twice := separateAdjacentTags(once); twice != once && !strings.HasPrefix(once, " ") {
			t.Errorf("rewrite not idempotent:\n once %q\ntwice %q", once, twice)
		}
		// The fuzzer has no per-input timeout; a watchdog turns a hang in
		// the engine into a crash that records the input.
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				panic(fmt.Sprintf("template render still running after 10s: %q", src))
			}
		}()
		tmpl, err := NewTemplate(src, "<s>", "</s>")
		if err != nil {
			return
		}
		tmpl.SetClock(func() time.Time { return fixedNow })
		// Tighter than the defaults so that inputs which run into a limit
		// cost milliseconds, not a second: the fuzzer explores more.
		tmpl.SetLimits(jinja.Limits{MaxSteps: 50_000, MaxBytes: 1 << 20, MaxItems: 1 << 16})
		_, _ = tmpl.Render(msgs, true)
		_, _ = tmpl.Render(nil, false)
		_, _ = tmpl.RenderWithTools(msgs[:2], []byte(`[{"name":"f","parameters":{}}]`), true)
		_, _ = tmpl.RenderWithTools(toolRoundTrip, []byte(`[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"type":"string"}}}}}]`), true)
	})
}
