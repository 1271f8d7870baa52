package jinja_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/minfer/minfer/internal/jinja"
)

// hostile are templates that, without limits in the engine, end the
// process (stack overflow, out of memory) or run for hours.
var hostile = map[string]struct {
	src  string
	what string // the limit that stops it
}{
	"recursive macro":        {`{% macro f(n) %}{{ f(n+1) }}{% endmacro %}{{ f(0) }}`, "recursion depth"},
	"mutual recursion":       {`{% macro a(n) %}{{ b(n) }}{% endmacro %}{% macro b(n) %}{{ a(n) }}{% endmacro %}{{ a(0) }}`, "recursion depth"},
	"recursive caller":       {`{% macro f() %}{% call f() %}x{% endcall %}{% endmacro %}{{ f() }}`, "recursion depth"},
	"huge loop":              {`{% for i in range(1000000) %}{% for j in range(1000000) %}{% endfor %}{% endfor %}`, "steps"},
	"huge output":            {`{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}`, "output size"},
	"string doubling":        {`{% set ns = namespace(s='ab') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}`, "string size"},
	"string doubling by +":   {`{% set ns = namespace(s='ab') %}{% for i in range(100) %}{% set ns.s = ns.s + ns.s %}{% endfor %}`, "string size"},
	"string repeat":          {`{{ 'abc' * (999999 * 999999) }}`, "string size"},
	"repeat in loop":         {`{% set ns = namespace(s='ab') %}{% for i in range(100) %}{% set ns.s = ns.s * 2 %}{% endfor %}`, "string size"},
	"list doubling":          {`{% set ns = namespace(l=[1]) %}{% for i in range(100) %}{% set ns.l = ns.l + ns.l %}{% endfor %}`, "steps"},
	"list repeat":            {`{{ ([1] * 999999) * 999999 }}`, "list size"},
	"join amplification":     {`{% set s = 'x' * 1000000 %}{% set l = [s] * 1000 %}{{ l|join('') }}`, "string size"},
	"replace amplification":  {`{% set ns = namespace(s='aaaa') %}{% for i in range(60) %}{% set ns.s = ns.s.replace('a', ns.s) %}{% endfor %}`, "string size"},
	"replace filter":         {`{% set ns = namespace(s='aaaa') %}{% for i in range(60) %}{% set ns.s = ns.s|replace('a', ns.s) %}{% endfor %}`, "string size"},
	"indent width":           {`{{ ('a\n' * 1000)|indent(999999 * 999) }}`, "string size"},
	"append forever":         {`{% set l = [] %}{% for i in range(1000000) %}{% for j in range(1000000) %}{% set _ = l.append(j) %}{% endfor %}{% endfor %}`, "steps"},
	"sort in loop":           {`{% set l = range(1000000)|list %}{% for i in range(1000000) %}{% set _ = l|sort %}{% endfor %}`, "steps"},
	"membership in loop":     {`{% set l = range(1000000)|list %}{% for i in range(1000000) %}{% if -1 in l %}{% endif %}{% endfor %}`, "steps"},
	"print list in loop":     {`{% set l = range(1000000)|list %}{% for i in range(1000000) %}{% set s = l|string %}{% endfor %}`, "steps"},
	"self-referencing print": {`{% set l = [1] %}{% set _ = l.append(l) %}{% for i in range(100) %}{% set _ = l.append(l) %}{% endfor %}{{ l }}`, ""},
}

func TestHostileTemplatesHitLimits(t *testing.T) {
	for name, c := range hostile {
		t.Run(name, func(t *testing.T) {
			tmpl, err := jinja.Compile(c.src)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			out, err := tmpl.Render(nil)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<30 {
				t.Errorf("render allocated %d MiB", alloc>>20)
			}
			if c.what == "" {
				// Renders, bounded.
				if err != nil && !errors.Is(err, jinja.ErrLimit) {
					t.Fatalf("render: %v", err)
				}
				return
			}
			var lim *jinja.LimitError
			if !errors.As(err, &lim) || !errors.Is(err, jinja.ErrLimit) {
				t.Fatalf("render = %d bytes, %v; want a LimitError", len(out), err)
			}
			if lim.What != c.what {
				t.Errorf("limit %q hit, want %q (%v)", lim.What, c.what, err)
			}
		})
	}
}

// Self-references print and compare like Python (which shows [...]) and
// tojson refuses them, instead of recursing until the stack overflows.
func TestSelfReferences(t *testing.T) {
	for src, want := range map[string]string{
		`{% set l = [1] %}{% set _ = l.append(l) %}{{ l == l }}`:                        "",
		`{% set l = [1] %}{% set _ = l.append(l) %}{{ (l|string)[:12] }}`:               "[1, [1, [1, ",
		`{% set ns = namespace(a=1) %}{% set ns.b = ns %}{{ (ns|string)[:20] }}`:        "{'a': 1, 'b': {'a': ",
		`{% set l = [1] %}{% set _ = l.append(l) %}{{ l|tojson }}`:                      "error",
		`{% set ns = namespace(a=1) %}{% set ns.b = ns %}{{ ns|tojson(indent=2) }}`:     "error",
		`{% set l = [1] %}{% set _ = l.append(l) %}{{ l|join(',')|length > 10 }}`:       "True",
		`{% set l = [1] %}{% set _ = l.append(l) %}{% if l in [l] %}in{% endif %}`:      "",
		`{% set l = [1] %}{% set _ = l.append(l) %}{{ [l, l]|unique|list|length > 0 }}`: "True",
	} {
		tmpl, err := jinja.Compile(src)
		if err != nil {
			t.Fatalf("%s: compile: %v", src, err)
		}
		got, err := tmpl.Render(nil)
		switch {
		case want == "error":
			if err == nil {
				t.Errorf("%s: rendered %.40q, want an error", src, got)
			}
		case want == "":
			// Any bounded outcome.
		case err != nil || got != want:
			t.Errorf("%s = %q, %v; want %q", src, got, err, want)
		}
	}
}

// Limits can be set per render.
func TestRenderValuesLimits(t *testing.T) {
	tmpl, err := jinja.Compile(`{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{% endif %}.{% endmacro %}{{ f(depth) }}`)
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]jinja.Value{"depth": jinja.NewInt(10)}
	if out, err := tmpl.RenderValuesLimits(data, jinja.Limits{MaxDepth: 11}); err != nil || out != strings.Repeat(".", 11) {
		t.Errorf("depth 11 within 11: %q, %v", out, err)
	}
	if _, err := tmpl.RenderValuesLimits(data, jinja.Limits{MaxDepth: 10}); !errors.Is(err, jinja.ErrLimit) {
		t.Errorf("depth 11 within 10: %v, want ErrLimit", err)
	}
	if _, err := tmpl.RenderValuesLimits(data, jinja.Limits{MaxBytes: 5}); !errors.Is(err, jinja.ErrLimit) {
		t.Errorf("11 bytes within 5: %v, want ErrLimit", err)
	}
	big, _ := jinja.Compile(`{% for i in range(100) %}{% endfor %}`)
	if _, err := big.RenderValuesLimits(nil, jinja.Limits{MaxSteps: 50}); !errors.Is(err, jinja.ErrLimit) {
		t.Errorf("100 iterations within 50 steps: %v, want ErrLimit", err)
	}
}

// The fork's jinja2 behaviours, each as Python jinja2 3.1 renders it.
func TestJinja2Compatibility(t *testing.T) {
	cases := []struct {
		src  string
		data map[string]any
		want string // "" with err: must fail
		err  string
	}{
		// tojson with indent: key order kept, "," item separator, nesting.
		{src: `{{ d|tojson(indent=2) }}`, data: map[string]any{"d": []any{1, map[string]any{}, []any{}}}, want: "[\n  1,\n  {},\n  []\n]"},
		{src: `{{ {'b': 1, 'a': [true, none, 1.5]}|tojson(indent=4) }}`, want: "{\n    \"b\": 1,\n    \"a\": [\n        true,\n        null,\n        1.5\n    ]\n}"},
		{src: `{{ {'b': 1, 'a': 2}|tojson }}`, want: `{"b": 1, "a": 2}`},
		{src: `{{ {'a': 'é<&>"\\'}|tojson }}`, want: `{"a": "é<&>\"\\"}`},
		{src: `{{ [1.0, 1.0 * 10 ** 16, 0.0001, 0.00001, 2.5]|tojson }}`, want: `[1.0, 1e+16, 0.0001, 1e-05, 2.5]`},
		// Markup: + escapes the plain side, ~ does not.
		{src: `{{ "<b>"|safe + "<i>" }}`, want: "<b>&lt;i&gt;"},
		{src: `{{ "<i>" + "<b>"|safe }}`, want: "&lt;i&gt;<b>"},
		{src: `{{ "<b>"|safe ~ "<i>" }}`, want: "<b><i>"},
		{src: `{{ "'\""|e }}`, want: "&#39;&#34;"},
		// Undefined values raise when used, print as nothing otherwise.
		{src: `{{ x }}|{{ x|length }}|{% for a in x %}{% endfor %}{{ x is defined }}`, want: "|0|False"},
		{src: `{{ x + 'a' }}`, err: "UndefinedError: 'x' is undefined"},
		{src: `{{ d.missing + 'a' }}`, data: map[string]any{"d": map[string]any{}}, err: "UndefinedError: 'dict object' has no attribute 'missing'"},
		{src: `{{ d['missing'] ~ 'a' }}`, data: map[string]any{"d": map[string]any{}}, want: "a"},
		{src: `{{ x.y }}`, err: "UndefinedError: 'x' is undefined"},
		// Python's + typing.
		{src: `{{ 'a' + 1 }}`, err: `can only concatenate str (not "int") to str`},
		{src: `{{ 'a' + {} }}`, err: `can only concatenate str (not "dict") to str`},
		{src: `{{ 1 + true }}|{{ [1] + [2] }}|{{ 7 // -2 }}|{{ -7 % 3 }}|{{ 2 ** 10 }}`, want: "2|[1, 2]|-4|2|1024"},
		{src: `{{ 1 / 0 }}`, err: "ZeroDivisionError"},
		{src: `{{ (-1) ** 1000000000001 }}|{{ 1 ** 999999999999 }}|{{ 0 ** 0 }}|{{ 3 ** 39 }}`, want: "-1|1|1|4052555153018976267"},
		{src: `{{ 3 ** 40 }}`, err: "overflows"},
		// Loop filters unpack pairs as the body does.
		{src: `{% for k, v in d.items() if v > 1 %}{{ k }}={{ v }};{% endfor %}`, data: map[string]any{"d": map[string]any{"a": 1, "b": 2}}, want: "b=2;"},
		{src: `{% for k, v in [[1, 2, 3]] %}{% endfor %}`, err: "cannot unpack"},
		// map/select give generators: tojson refuses them, list accepts them.
		{src: `{{ [{'a': 1}]|map(attribute='a')|tojson }}`, err: "generator is not JSON serializable"},
		{src: `{{ [{'a': 1}]|map(attribute='a')|list|tojson }}`, want: "[1]"},
		// fromjson keeps integers and key order.
		{src: `{{ '{"z": 42, "a": 1.0}'|fromjson|tojson }}`, want: `{"z": 42, "a": 1.0}`},
	}
	for _, c := range cases {
		tmpl, err := jinja.Compile(c.src)
		if err != nil {
			t.Fatalf("%s: compile: %v", c.src, err)
		}
		got, err := tmpl.Render(c.data)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s = %q, %v; want an error containing %q", c.src, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s = %q, %v; want %q", c.src, got, err, c.want)
		}
	}
}

// Sources built to make the parser or the evaluator recurse or loop
// (measured before the fork's fixes: 2 to 9 s each to compile; now tens of
// milliseconds) compile and render, or fail with an error, without
// exhausting the stack.
func TestDeeplyNestedSources(t *testing.T) {
	for name, c := range map[string]struct {
		src     string
		wantErr bool
	}{
		"parentheses":  {"{{ " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000) + " }}", true},
		"lists":        {"{{ " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + " }}", true},
		"not":          {"{{ " + strings.Repeat("not ", 60000) + "x }}", true},
		"unary minus":  {"{{ " + strings.Repeat("-", 100000) + "1 }}", true},
		"nested ifs":   {strings.Repeat("{% if true %}", 20000) + strings.Repeat("{% endif %}", 20000), false},
		"nested fors":  {strings.Repeat("{% for x in [1] %}", 20000) + strings.Repeat("{% endfor %}", 20000), false},
		"many sets":    {strings.Repeat("{% set x = 1 %}", 20000), false},
		"long sum":     {"{{ 1" + strings.Repeat(" + 1", 60000) + " }}", false},
		"filter chain": {"{{ x" + strings.Repeat("|trim", 60000) + " }}", false},
	} {
		tmpl, err := jinja.Compile(c.src)
		if err == nil {
			_, err = tmpl.Render(nil)
		}
		if (err != nil) != c.wantErr || err != nil && !strings.Contains(err.Error(), "nested deeper") {
			t.Errorf("%s: %v, want error: %v", name, err, c.wantErr)
		}
	}
}
