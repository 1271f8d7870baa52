package chat

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The conversation every built-in is checked on: system, user, assistant,
// then the generation prompt.
var threeTurns = []Message{
	{Role: "system", Content: "You are terse."},
	{Role: "user", Content: "Hi"},
	{Role: "assistant", Content: "Hello."},
}

// Hand-checked against each format's public description.
func TestBuiltinThreeTurns(t *testing.T) {
	tests := []struct {
		family   string
		bos, eos string
		want     string
		wantBOS  bool
		stops    []string
	}{
		{FamilyChatML, "<s>", "</s>",
			"<|im_start|>system\nYou are terse.<|im_end|>\n" +
				"<|im_start|>user\nHi<|im_end|>\n" +
				"<|im_start|>assistant\nHello.<|im_end|>\n" +
				"<|im_start|>assistant\n",
			false, []string{"<|im_end|>"}},
		{FamilyLlama2, "<s>", "</s>",
			"<s>[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST] Hello. </s>",
			true, []string{"</s>"}},
		{FamilyLlama3, "<|begin_of_text|>", "<|end_of_text|>",
			"<|begin_of_text|>" +
				"<|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>" +
				"<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>" +
				"<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>" +
				"<|start_header_id|>assistant<|end_header_id|>\n\n",
			true, []string{"<|eot_id|>", "<|eom_id|>"}},
		{FamilyMistral, "<s>", "</s>",
			"<s>[INST] You are terse.\n\nHi [/INST]Hello.</s>",
			true, []string{"</s>"}},
		{FamilyGemma, "<bos>", "<eos>",
			"<bos><start_of_turn>user\nYou are terse.\n\nHi<end_of_turn>\n" +
				"<start_of_turn>model\nHello.<end_of_turn>\n" +
				"<start_of_turn>model\n",
			true, []string{"<end_of_turn>"}},
		{FamilyPhi3, "<s>", "<|endoftext|>",
			"<|system|>\nYou are terse.<|end|>\n" +
				"<|user|>\nHi<|end|>\n" +
				"<|assistant|>\nHello.<|end|>\n" +
				"<|assistant|>\n",
			false, []string{"<|end|>"}},
		{FamilyZephyr, "<s>", "</s>",
			"<|system|>\nYou are terse.</s>\n" +
				"<|user|>\nHi</s>\n" +
				"<|assistant|>\nHello.</s>\n" +
				"<|assistant|>\n",
			false, []string{"</s>"}},
	}
	if len(tests) != len(BuiltinNames()) {
		t.Fatalf("table covers %d families, BuiltinNames has %d", len(tests), len(BuiltinNames()))
	}
	for _, tc := range tests {
		t.Run(tc.family, func(t *testing.T) {
			tmpl, err := Builtin(tc.family, tc.bos, tc.eos)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tmpl.Render(threeTurns, true)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("render\n got: %q\nwant: %q", got, tc.want)
			}
			if b := tmpl.StartsWithBOS(got); b != tc.wantBOS {
				t.Errorf("StartsWithBOS = %v, want %v", b, tc.wantBOS)
			}
			if s := tmpl.StopStrings(); !slices.Equal(s, tc.stops) {
				t.Errorf("StopStrings = %q, want %q", s, tc.stops)
			}
			if !tmpl.IsBuiltin() || tmpl.Family() != tc.family {
				t.Errorf("IsBuiltin=%v Family=%q", tmpl.IsBuiltin(), tmpl.Family())
			}
			// Each built-in is recognised as itself.
			if d := DetectFamily(tmpl.Source()); d != tc.family {
				t.Errorf("DetectFamily(own source) = %q", d)
			}
		})
	}
}

// Where a testdata template is the same format as a built-in, both must
// render the testdata conversations identically (the built-ins also accept
// a system message where Mistral Instruct and Gemma 2 raise).
func TestBuiltinsAgreeWithReferenceTemplates(t *testing.T) {
	pairs := []struct {
		family, template string
	}{
		{FamilyChatML, "chatml.jinja"},
		{FamilyLlama2, "llama-2-chat.jinja"},
		{FamilyMistral, "mistral-instruct.jinja"},
		{FamilyGemma, "google-gemma-2-2b-it.jinja"},
		{FamilyPhi3, "microsoft-Phi-3.5-mini-instruct.jinja"},
		{FamilyZephyr, "zephyr.jinja"},
	}
	_, cases := loadExpected(t)
	for _, p := range pairs {
		tmpl, err := Builtin(p.family, "<s>", "</s>")
		if err != nil {
			t.Fatal(err)
		}
		compared := 0
		for _, c := range cases {
			if c.Template != p.template || c.Expected == nil {
				continue
			}
			compared++
			t.Run(fmt.Sprintf("%s~%s/%s/gen=%v", p.family, p.template, c.Conversation, c.AddGenerationPrompt), func(t *testing.T) {
				got, err := tmpl.Render(c.Messages, c.AddGenerationPrompt)
				if err != nil {
					t.Fatal(err)
				}
				if got != *c.Expected {
					t.Errorf("\n got: %q\nwant: %q", got, *c.Expected)
				}
			})
		}
		if compared < 4 {
			t.Errorf("%s: only %d reference renders compared", p.template, compared)
		}
	}
}

func TestBuiltinEdgeConversations(t *testing.T) {
	tests := []struct {
		family string
		msgs   []Message
		gen    bool
		want   string
	}{
		{FamilyChatML, nil, true, "<|im_start|>assistant\n"},
		{FamilyLlama3, nil, false, ""},
		{FamilyMistral, []Message{{Role: "system", Content: "S"}}, false, "<s>[INST] S [/INST]"},
		{FamilyGemma, []Message{{Role: "system", Content: "S"}}, true, "<s><start_of_turn>user\nS<end_of_turn>\n<start_of_turn>model\n"},
		{FamilyLlama2, []Message{{Role: "system", Content: "S"}}, false, "<s>[INST] <<SYS>>\nS\n<</SYS>>\n\n [/INST]"},
		// A later system message is kept as a user turn, not dropped.
		{FamilyMistral, []Message{{Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}, {Role: "system", Content: "c"}}, false, "<s>[INST] a [/INST]b</s>[INST] c [/INST]"},
		{FamilyGemma, []Message{{Role: "user", Content: "a"}, {Role: "system", Content: "c"}}, true, "<s><start_of_turn>user\na<end_of_turn>\n<start_of_turn>user\nc<end_of_turn>\n<start_of_turn>model\n"},
		// Phi-3.5 skips an empty system message and ends with EOS without a
		// generation prompt.
		{FamilyPhi3, []Message{{Role: "system", Content: ""}, {Role: "user", Content: "u"}}, false, "<|user|>\nu<|end|>\n</s>"},
		{FamilyLlama3, []Message{{Role: "user", Content: "  padded \n"}}, false, "<s><|start_header_id|>user<|end_header_id|>\n\npadded<|eot_id|>"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%d msgs", tc.family, len(tc.msgs)), func(t *testing.T) {
			tmpl, err := Builtin(tc.family, "<s>", "</s>")
			if err != nil {
				t.Fatal(err)
			}
			got, err := tmpl.Render(tc.msgs, tc.gen)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBuiltinUnknown(t *testing.T) {
	_, err := Builtin("vicuna", "<s>", "</s>")
	if !errors.Is(err, ErrUnknownBuiltin) || !strings.Contains(err.Error(), "vicuna") {
		t.Errorf("err = %v, want ErrUnknownBuiltin naming vicuna", err)
	}
}

func TestDetectFamilyMarkers(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"chatml", "{{ '<|im_start|>' + role }}", FamilyChatML},
		{"llama-3", "'<|start_header_id|>' + role + '<|end_header_id|>'", FamilyLlama3},
		{"llama-2", "[INST] <<SYS>>", FamilyLlama2},
		{"mistral", "'[INST] ' + content + ' [/INST]'", FamilyMistral},
		{"gemma", "<start_of_turn>model", FamilyGemma},
		{"phi-3", "<|user|>\n{{ content }}<|end|>", FamilyPhi3},
		{"zephyr literal eos", "<|user|>\n{{ content }}</s>", FamilyZephyr},
		{"zephyr eos_token", "'<|user|>\n' + content + eos_token", FamilyZephyr},
		{"plain", "{{ messages[0].content }}", ""},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := DetectFamily(tc.src); got != tc.want {
				t.Errorf("DetectFamily(%q) = %q, want %q", tc.src, got, tc.want)
			}
		})
	}
}

func TestFamilyForName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"llama", ""},
		{"qwen2", FamilyChatML},
		{"qwen3moe", FamilyChatML},
		{"gemma3", FamilyGemma},
		{"gemma2", FamilyGemma},
		{"qwen3", FamilyChatML},
		{"qwen2moe", FamilyChatML},
		{"phi3", FamilyPhi3},
		{"llama Meta-Llama-3-8B-Instruct", FamilyLlama3},
		{"llama Llama-2-13b-chat", FamilyLlama2},
		{"llama Mixtral-8x7B-Instruct", FamilyMistral},
		{"llama zephyr-7b-beta (Mistral)", FamilyZephyr},
		{"chatml", FamilyChatML},
		{"PHI-3", FamilyPhi3},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := FamilyForName(tc.in); got != tc.want {
				t.Errorf("FamilyForName(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// A model template that uses strftime_now (Llama 3.2) gets the injected clock.
func TestModelTemplateDate(t *testing.T) {
	dir, _ := loadExpected(t)
	tmpl, src := ForModel(readTemplate(t, dir, "meta-llama-Llama-3.2-3B-Instruct.jinja"), "llama", "<|begin_of_text|>", "<|eot_id|>")
	if src.Kind != SourceModel || src.Family != FamilyLlama3 {
		t.Fatalf("source %v", src)
	}
	tmpl.SetClock(func() time.Time { return time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC) })
	got, err := tmpl.Render([]Message{{Role: "user", Content: "hi"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Today Date: 02 Jan 2025\n") || !tmpl.StartsWithBOS(got) {
		t.Errorf("render %q lacks the injected date or the BOS", got)
	}
	if !slices.Equal(tmpl.StopStrings(), []string{"<|eot_id|>", "<|eom_id|>"}) {
		t.Errorf("StopStrings = %q", tmpl.StopStrings())
	}
}

// The built-ins render a tool round trip (tool calls written as Hermes
// <tool_call> text, the result as a "tool" turn) instead of failing on the
// assistant turn that has no content.
func TestBuiltinsRenderToolRoundTrip(t *testing.T) {
	msgs := []Message{
		{Role: "user", Content: "Weather in Paris?"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "a1", Type: "function", Function: FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}},
		{Role: "tool", ToolCallID: "a1", Name: "get_weather", Content: `{"temp": 21}`},
		{Role: "assistant", Content: "21 degrees."},
		{Role: "user", Content: "Thanks"},
	}
	call := "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"}}\n</tool_call>"
	for _, name := range BuiltinNames() {
		tmpl, err := Builtin(name, "<s>", "</s>")
		if err != nil {
			t.Fatal(err)
		}
		out, err := tmpl.Render(msgs, true)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, want := range []string{call, `{"temp": 21}`, "21 degrees.", "Thanks"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: render lacks %q:\n%s", name, want, out)
			}
		}
	}
	if msgs[1].Content != "" || len(msgs[1].ToolCalls) != 1 {
		t.Error("rendering changed the caller's messages")
	}
}
