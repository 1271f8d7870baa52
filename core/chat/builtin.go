package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Built-in template families, used when a model ships no usable template.
const (
	FamilyChatML  = "chatml"
	FamilyLlama2  = "llama-2"
	FamilyLlama3  = "llama-3"
	FamilyMistral = "mistral"
	FamilyGemma   = "gemma"
	FamilyPhi3    = "phi-3"
	FamilyZephyr  = "zephyr"
)

// builtinSources holds the fallback templates, written from each format's
// public description. They are kept on one line per statement group because
// the engine applies trim_blocks/lstrip_blocks like Hugging Face does; no
// newline follows a block tag, so nothing is trimmed by accident.
//
// Formats without a system role (llama-2 keeps it in <<SYS>>, mistral and
// gemma have none) fold a leading system message into the first turn; a
// system message later in the conversation is rendered as a user turn
// rather than dropped.
var builtinSources = map[string]string{
	// <|im_start|>role\ncontent<|im_end|>\n … <|im_start|>assistant\n
	FamilyChatML: `{% for message in messages %}` +
		`{{ '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}` +
		`{% endfor %}` +
		`{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`,

	// Meta's Llama 2 chat: <s>[INST] <<SYS>>\nsys\n<</SYS>>\n\nuser [/INST] answer </s>
	// The reply follows "[/INST]" directly, so there is no generation prompt.
	FamilyLlama2: `{% set ns = namespace(system='') %}` +
		`{% for message in messages %}` +
		`{% if loop.first and message.role == 'system' %}{% set ns.system = message.content %}` +
		`{% elif message.role == 'assistant' %}{{ ' ' + message.content | trim + ' ' + eos_token }}` +
		`{% else %}` +
		`{% set content = message.content %}` +
		`{% if ns.system %}{% set content = '<<SYS>>\n' + ns.system + '\n<</SYS>>\n\n' + content %}{% set ns.system = '' %}{% endif %}` +
		`{{ bos_token + '[INST] ' + content | trim + ' [/INST]' }}` +
		`{% endif %}` +
		`{% endfor %}` +
		`{% if ns.system %}{{ bos_token + '[INST] <<SYS>>\n' + ns.system + '\n<</SYS>>\n\n [/INST]' }}{% endif %}`,

	// Meta's Llama 3: <|begin_of_text|><|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
	FamilyLlama3: `{% for message in messages %}` +
		`{% if loop.first %}{{ bos_token }}{% endif %}` +
		`{{ '<|start_header_id|>' + message.role + '<|end_header_id|>\n\n' + message.content | trim + '<|eot_id|>' }}` +
		`{% endfor %}` +
		`{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}`,

	// Mistral Instruct: <s>[INST] user [/INST]answer</s>[INST] user [/INST]
	// A leading system message is prepended to the first user turn.
	FamilyMistral: `{{ bos_token }}{% set ns = namespace(system='') %}` +
		`{% for message in messages %}` +
		`{% if loop.first and message.role == 'system' %}{% set ns.system = message.content + '\n\n' %}` +
		`{% elif message.role == 'assistant' %}{{ message.content + eos_token }}` +
		`{% else %}{{ '[INST] ' + ns.system + message.content + ' [/INST]' }}{% set ns.system = '' %}` +
		`{% endif %}` +
		`{% endfor %}` +
		`{% if ns.system %}{{ '[INST] ' + ns.system | trim + ' [/INST]' }}{% endif %}`,

	// Gemma: <bos><start_of_turn>user\ncontent<end_of_turn>\n<start_of_turn>model\n…
	// Gemma has no system role; like Gemma 3's template, the system text
	// opens the first turn.
	FamilyGemma: `{{ bos_token }}{% set ns = namespace(system='') %}` +
		`{% for message in messages %}` +
		`{% if loop.first and message.role == 'system' %}{% set ns.system = message.content | trim + '\n\n' %}` +
		`{% else %}` +
		`{% if message.role == 'assistant' %}{% set role = 'model' %}{% else %}{% set role = 'user' %}{% endif %}` +
		`{{ '<start_of_turn>' + role + '\n' + ns.system + message.content | trim + '<end_of_turn>\n' }}` +
		`{% set ns.system = '' %}` +
		`{% endif %}` +
		`{% endfor %}` +
		`{% if ns.system %}{{ '<start_of_turn>user\n' + ns.system | trim + '<end_of_turn>\n' }}{% endif %}` +
		`{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}`,

	// Phi-3 / Phi-3.5: <|role|>\ncontent<|end|>\n … <|assistant|>\n
	// Without a generation prompt the text ends in eos_token, as Phi-3.5's
	// own template does.
	FamilyPhi3: `{% for message in messages %}` +
		`{% if message.role == 'system' %}{% if message.content %}{{ '<|system|>\n' + message.content + '<|end|>\n' }}{% endif %}` +
		`{% elif message.role == 'user' %}{{ '<|user|>\n' + message.content + '<|end|>\n' }}` +
		`{% elif message.role == 'assistant' %}{{ '<|assistant|>\n' + message.content + '<|end|>\n' }}` +
		`{% else %}{{ '<|' + message.role + '|>\n' + message.content + '<|end|>\n' }}` +
		`{% endif %}` +
		`{% endfor %}` +
		`{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}`,

	// Zephyr: <|role|>\ncontent</s>\n … <|assistant|>\n
	FamilyZephyr: `{% for message in messages %}` +
		`{% if message.role == 'user' %}{{ '<|user|>\n' + message.content + eos_token + '\n' }}` +
		`{% elif message.role == 'assistant' %}{{ '<|assistant|>\n' + message.content + eos_token + '\n' }}` +
		`{% else %}{{ '<|' + message.role + '|>\n' + message.content + eos_token + '\n' }}` +
		`{% endif %}` +
		`{% endfor %}` +
		`{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}`,
}

// builtinView is how the built-in templates, which know only roles and
// text, see tool calls: each call is written into the assistant's text as
// <tool_call>{"name": …, "arguments": …}</tool_call> (the Hermes form many
// models were trained on), and a tool result is a turn of role "tool".
func builtinView(msgs []Message) []Message {
	if !slices.ContainsFunc(msgs, func(m Message) bool { return len(m.ToolCalls) > 0 }) {
		return msgs
	}
	out := slices.Clone(msgs)
	for i, m := range out {
		if len(m.ToolCalls) == 0 {
			continue
		}
		var b strings.Builder
		b.WriteString(m.Content)
		for _, c := range m.ToolCalls {
			args := c.Function.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			name, _ := json.Marshal(c.Function.Name)
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "<tool_call>\n{\"name\": %s, \"arguments\": %s}\n</tool_call>", name, args)
		}
		out[i].Content = b.String()
		out[i].ToolCalls = nil
	}
	return out
}

// BuiltinNames lists the built-in template families in a fixed order.
func BuiltinNames() []string {
	return []string{FamilyChatML, FamilyLlama2, FamilyLlama3, FamilyMistral, FamilyGemma, FamilyPhi3, FamilyZephyr}
}

// ErrUnknownBuiltin is returned by Builtin for a name not in BuiltinNames.
var ErrUnknownBuiltin = errors.New("chat: unknown built-in template")

// Builtin returns the built-in template of the named family, bound to the
// model's BOS/EOS text.
func Builtin(name, bos, eos string) (*Template, error) {
	src, ok := builtinSources[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownBuiltin, name, strings.Join(BuiltinNames(), ", "))
	}
	t, err := NewTemplate(src, bos, eos)
	if err != nil {
		return nil, fmt.Errorf("chat: built-in template %q: %w", name, err)
	}
	t.family = name
	t.builtin = true
	return t, nil
}

// stopStringsFor returns the end-of-turn markers of a family.
func stopStringsFor(family, eos string) []string {
	switch family {
	case FamilyChatML:
		return []string{"<|im_end|>"}
	case FamilyLlama3:
		// <|eom_id|> ends a turn that calls a tool (Llama 3.1+).
		return []string{"<|eot_id|>", "<|eom_id|>"}
	case FamilyGemma:
		return []string{"<end_of_turn>"}
	case FamilyPhi3:
		return []string{"<|end|>"}
	case FamilyLlama2, FamilyMistral, FamilyZephyr:
		// These formats end a turn with the EOS token itself.
		if eos != "" {
			return []string{eos}
		}
	}
	return nil
}

// DetectFamily recognises a built-in family from a template's text by the
// markers it prints, in the spirit of llama.cpp's llm_chat_detect_template.
// It returns "" when none matches.
func DetectFamily(src string) string {
	has := func(s string) bool { return strings.Contains(src, s) }
	switch {
	case has("<|im_start|>"):
		return FamilyChatML
	case has("<|start_header_id|>") && has("<|end_header_id|>"):
		return FamilyLlama3
	case has("[INST]"):
		// Llama 2 wraps the system prompt in <<SYS>>; Mistral has none.
		if has("<<SYS>>") {
			return FamilyLlama2
		}
		return FamilyMistral
	case has("<start_of_turn>"):
		return FamilyGemma
	case has("<|user|>") && has("<|end|>"):
		return FamilyPhi3
	case has("<|user|>") && (has("</s>") || has("eos_token") || has("<|assistant|>")):
		return FamilyZephyr
	}
	return ""
}

// FamilyForName guesses a built-in family from GGUF general.architecture
// and/or general.name (pass either or both, e.g. "llama Meta-Llama-3-8B").
// An ambiguous architecture alone ("llama": Llama 2, Llama 3, Mistral and
// TinyStories all use it) gives "".
func FamilyForName(archOrName string) string {
	s := strings.ToLower(archOrName)
	for _, name := range BuiltinNames() {
		if s == name {
			return name
		}
	}
	has := func(subs ...string) bool {
		return slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(s, sub) })
	}
	switch {
	case has("qwen"):
		return FamilyChatML
	case has("gemma"):
		return FamilyGemma
	case has("phi3", "phi-3"):
		return FamilyPhi3
	case has("zephyr"): // before mistral: Zephyr is a Mistral fine-tune
		return FamilyZephyr
	case has("mistral", "mixtral"):
		return FamilyMistral
	case has("llama-3", "llama3", "llama 3"):
		return FamilyLlama3
	case has("llama-2", "llama2", "llama 2") && has("chat"):
		return FamilyLlama2
	}
	return ""
}

// SourceKind says where ForModel's template came from.
type SourceKind int

const (
	// SourceNone: no template; the caller does plain text completion.
	SourceNone SourceKind = iota
	// SourceModel: the model's own tokenizer.chat_template.
	SourceModel
	// SourceBuiltin: a built-in fallback (Source.Family names it).
	SourceBuiltin
)

// Source describes ForModel's choice, for the UI and logs.
type Source struct {
	Kind SourceKind
	// Family is the built-in family used (SourceBuiltin) or recognised in
	// the model's template (SourceModel; "" when unknown).
	Family string
	// ModelErr says why the model's template was not used; nil when it was
	// used or when the model has none.
	ModelErr error
}

func (s Source) String() string {
	var b strings.Builder
	switch s.Kind {
	case SourceModel:
		b.WriteString("model template")
		if s.Family != "" {
			fmt.Fprintf(&b, " (%s)", s.Family)
		}
	case SourceBuiltin:
		fmt.Fprintf(&b, "built-in %s template", s.Family)
	default:
		b.WriteString("no chat template (plain completion)")
	}
	if s.ModelErr != nil {
		fmt.Fprintf(&b, "; this model's chat template cannot be used: %v", s.ModelErr)
	}
	return b.String()
}

// probeConversation is what a model template must render before ForModel
// trusts it. It has no system message because several real templates
// (Gemma 2, Mistral Instruct) refuse one yet are right for everything else.
var probeConversation = []Message{
	{Role: "user", Content: "Hello."},
	{Role: "assistant", Content: "Hi! How can I help?"},
	{Role: "user", Content: "Tell me a joke."},
}

// ForModel picks the chat template for a model: its own template (src, the
// GGUF tokenizer.chat_template) when it compiles and renders a probe
// conversation containing the last user message; else a built-in family
// recognised from src's text or from archOrName (general.architecture and/or
// general.name, see FamilyForName); else nil with SourceNone, meaning plain
// completion (e.g. stories260K, which ships no template).
func ForModel(src, archOrName, bos, eos string) (*Template, Source) {
	var modelErr error
	family := DetectFamily(src)
	if family == "" {
		family = FamilyForName(archOrName)
	}
	if strings.TrimSpace(src) != "" {
		t, err := NewTemplate(src, bos, eos)
		if err == nil {
			err = probe(t)
		}
		if err == nil {
			t.fallback = family
			return t, Source{Kind: SourceModel, Family: t.family}
		}
		modelErr = err
	}
	if family != "" {
		t, err := Builtin(family, bos, eos)
		if err != nil { // built-ins are tested to compile; this is a bug
			return nil, Source{Kind: SourceNone, ModelErr: errors.Join(modelErr, err)}
		}
		return t, Source{Kind: SourceBuiltin, Family: family, ModelErr: modelErr}
	}
	return nil, Source{Kind: SourceNone, ModelErr: modelErr}
}

func probe(t *Template) error {
	out, err := t.Render(probeConversation, true)
	if err != nil {
		return fmt.Errorf("probe conversation: %w", err)
	}
	last := probeConversation[len(probeConversation)-1].Content
	if !strings.Contains(out, last) {
		return fmt.Errorf("%w: probe conversation rendered %d bytes without the last user message %q", ErrTemplate, len(out), last)
	}
	return nil
}

// FoldSystemPrompt returns msgs with leading system messages merged into the
// first user message ("system\n\nuser"), for templates that refuse a system
// role (they raise, e.g. Gemma 2's "System role not supported"). msgs is not
// modified. With no user message the system text becomes a user message.
func FoldSystemPrompt(msgs []Message) []Message {
	var system []string
	i := 0
	for ; i < len(msgs) && msgs[i].Role == "system"; i++ {
		system = append(system, msgs[i].Content)
	}
	if len(system) == 0 {
		return slices.Clone(msgs)
	}
	prefix := strings.Join(system, "\n\n")
	rest := slices.Clone(msgs[i:])
	if len(rest) > 0 && rest[0].Role == "user" {
		rest[0].Content = prefix + "\n\n" + rest[0].Content
		return rest
	}
	return append([]Message{{Role: "user", Content: prefix}}, rest...)
}
