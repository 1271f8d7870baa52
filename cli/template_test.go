package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/coretest"
	"github.com/minfer/minfer/internal/ggtest"
)

// Every case of tools.json through `minfer template --file`: stdout is the
// Python jinja2 render byte for byte; a case where Python raised exits 1
// with the template's error on stderr and nothing on stdout.
func TestTemplateCommandMatchesPythonJinja(t *testing.T) {
	dir := ggtest.Path(t, "templates")
	raw, err := os.ReadFile(filepath.Join(dir, "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Template            string          `json:"template"`
			Conversation        string          `json:"conversation"`
			Messages            json.RawMessage `json:"messages"`
			Tools               json.RawMessage `json:"tools"`
			AddGenerationPrompt bool            `json:"add_generation_prompt"`
			Expected            *string         `json:"expected"`
			Error               string          `json:"error"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for i, c := range doc.Cases {
		msgs := filepath.Join(tmp, "m.json")
		tools := filepath.Join(tmp, "t.json")
		os.WriteFile(msgs, c.Messages, 0o644)
		os.WriteFile(tools, c.Tools, 0o644)
		args := []string{"template", "--file", filepath.Join(dir, c.Template), "--messages", msgs, "--tools", tools,
			"--bos", "<s>", "--eos", "</s>", "--now", "2024-07-26T12:00:00"}
		if c.AddGenerationPrompt {
			args = append(args, "--add-generation-prompt")
		}
		var out, errb bytes.Buffer
		code := runCLI(&out, &errb, args...)
		name := c.Template + "/" + c.Conversation
		if c.Error != "" {
			if code != 1 || out.Len() != 0 || !strings.HasPrefix(errb.String(), "minfer template: ") {
				t.Errorf("case %d %s: exit %d, stdout %q, stderr %q; want exit 1 and the error", i, name, code, out.String(), errb.String())
			}
			continue
		}
		if code != 0 {
			t.Fatalf("case %d %s: exit %d: %s", i, name, code, errb.String())
		}
		if out.String() != *c.Expected {
			t.Errorf("case %d %s: output differs from Python's render", i, name)
		}
	}
}

func TestTemplateCommandErrors(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	msgs := write("m.json", `[{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]`)
	gemma := filepath.Join(ggtest.Path(t, "templates"), "google-gemma-2-2b-it.jinja")
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		// The template's own raise_exception message.
		{[]string{"--file", gemma, "--messages", msgs}, 1, "minfer template: System role not supported\n"},
		// A hostile template stops at the engine's limit.
		{[]string{"--file", write("r.jinja", `{% macro f(n) %}{{ f(n+1) }}{% endmacro %}{{ f(0) }}`), "--messages", msgs}, 1, "minfer template: template exceeds the recursion depth limit of 100\n"},
		{[]string{"--file", write("u.jinja", `{{ messages[0].content + nothing }}`), "--messages", msgs}, 1, "minfer template: UndefinedError: 'nothing' is undefined\n"},
		{[]string{"--file", write("s.jinja", `{% if %}`), "--messages", msgs}, 1, "minfer template: jinja parse"},
		{[]string{"--messages", msgs}, 2, "need exactly one of"},
		{[]string{"--file", gemma}, 2, "need --messages"},
		{[]string{"--file", gemma, "--messages", write("bad.json", `[{"role": 1}]`)}, 1, "bad.json"},
		{[]string{"--file", gemma, "--messages", msgs, "--now", "yesterday"}, 2, "--now"},
	} {
		var out, errb bytes.Buffer
		code := runCLI(&out, &errb, append([]string{"template"}, c.args...)...)
		if code != c.code || out.Len() != 0 || !strings.Contains(errb.String(), c.stderr) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, out.String(), errb.String(), c.code, c.stderr)
		}
	}
}

// -m renders the model's own template with its BOS/EOS text; a request
// body ({"messages", "tools"}) is accepted as --messages.
func TestTemplateCommandFromModel(t *testing.T) {
	model := coretest.WithChatML(t, ggtest.Path(t, "models", "stories260K.gguf"))
	body := filepath.Join(t.TempDir(), "req.json")
	os.WriteFile(body, []byte(`{"model": "x", "messages": [{"role": "user", "content": "Hi"}], "tools": null}`), 0o644)
	var out, errb bytes.Buffer
	if code := runCLI(&out, &errb, "template", "-m", model, "--messages", body, "--add-generation-prompt"); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	var out2, errb2 bytes.Buffer
	if code := runCLI(&out2, &errb2, "template", "-m", ggtest.Path(t, "models", "stories260K.gguf"), "--messages", body); code != 1 || !strings.Contains(errb2.String(), "no chat template") {
		t.Errorf("model without a template: exit %d, %q", code, errb2.String())
	}
}

// A model template that renders the load-time probe but recurses without
// end on a conversation with a system prompt: `minfer chat` says "this
// model's chat template …", continues with the built-in template of its
// family, and both turns get their replies.
func TestChatFallsBackWhenModelTemplateFails(t *testing.T) {
	hostile := `{% macro f(n) %}{{ f(n+1) }}{% endmacro %}{% if messages[0].role == 'system' %}{{ f(0) }}{% endif %}` +
		`{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n`
	model := coretest.Rewrite(t, ggtest.Path(t, "models", "stories260K.gguf"), func(_ *gguf.File, b *gguf.Builder) error {
		return b.Set("tokenizer.chat_template", gguf.Value{Type: gguf.ValString, V: hostile})
	})
	var out, errb bytes.Buffer
	e := Env{Stdin: strings.NewReader("Tell me a story.\nAnother one.\n"), Stdout: &out, Stderr: &errb, LookupEnv: func(string) (string, bool) { return "", false }}
	if code := Main(e, []string{"chat", "-m", model, "--temp", "0", "-n", "8", "--system", "You tell stories."}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	stderr := errb.String()
	if !strings.Contains(stderr, "template: model template (chatml)") ||
		!strings.Contains(stderr, "this model's chat template cannot render this conversation") ||
		!strings.Contains(stderr, "recursion depth") ||
		!strings.Contains(stderr, "Continuing this chat with the built-in chatml template.") ||
		strings.Count(stderr, "prompt tokens") != 2 || strings.Contains(stderr, "error:") {
		t.Fatalf("stderr:\n%s", stderr)
	}
}
