package chat

import "strings"

// ToolFormat is how a model family writes tool calls in its reply.
type ToolFormat string

// The tool-call formats of the templates in testdata/templates, each as its
// authors document it.
const (
	// ToolFormatNone: the template has no tool-call syntax.
	ToolFormatNone ToolFormat = ""
	// ToolFormatHermes: <tool_call>{"name": …, "arguments": {…}}</tool_call>,
	// one element per call (Hermes 2 Pro, Qwen 2.5).
	ToolFormatHermes ToolFormat = "hermes"
	// ToolFormatLlama3: the whole reply is {"name": …, "parameters": {…}},
	// or <|python_tag|> followed by that JSON or a built-in tool call
	// name.call(key="value", …) (Llama 3.1, 3.2, 3.3).
	ToolFormatLlama3 ToolFormat = "llama3"
	// ToolFormatMistral: [TOOL_CALLS][{"name": …, "arguments": {…}, "id": …}]
	// (Mistral 7B v0.3, Mixtral), or [TOOL_CALLS]name[ARGS]{…} (later ones).
	ToolFormatMistral ToolFormat = "mistral"
	// ToolFormatCommandR: Action: ```json [{"tool_name": …, "parameters":
	// {…}}] ``` (Command R / R+).
	ToolFormatCommandR ToolFormat = "command-r"
	// ToolFormatCommandR7B: <|START_ACTION|>[{"tool_call_id": …,
	// "tool_name": …, "parameters": {…}}]<|END_ACTION|> (Command R7B).
	ToolFormatCommandR7B ToolFormat = "command-r7b"
	// ToolFormatFunctionary: <function=name>{…}</function>, and
	// <|python_tag|>code for the python tool (functionary v3.1).
	ToolFormatFunctionary ToolFormat = "functionary"
	// ToolFormatFirefunction: functools[{"name": …, "arguments": {…}}, …]
	// (firefunction v2).
	ToolFormatFirefunction ToolFormat = "firefunction"
)

// DetectToolFormat recognises the tool-call format from a chat template's
// source (the instructions and examples it renders for the model).
func DetectToolFormat(src string) ToolFormat {
	has := func(s string) bool { return strings.Contains(src, s) }
	switch {
	case has("<tool_call>"):
		return ToolFormatHermes
	case has("[TOOL_CALLS]"):
		return ToolFormatMistral
	case has("<|START_ACTION|>"):
		return ToolFormatCommandR7B
	case has("Action:") && has("tool_name"):
		return ToolFormatCommandR
	case has("<function="):
		return ToolFormatFunctionary
	case has("functools["):
		return ToolFormatFirefunction
	case has("<|python_tag|>"), has("<|start_header_id|>") && has(`"parameters"`) && has("tool"):
		return ToolFormatLlama3
	}
	return ToolFormatNone
}

// ToolFormat is the tool-call format of the template (ToolFormatNone for a
// nil template).
func (t *Template) ToolFormat() ToolFormat {
	if t == nil {
		return ToolFormatNone
	}
	return t.tools
}

// markers are the texts that open a tool-call region in a reply.
func (f ToolFormat) markers() []string {
	switch f {
	case ToolFormatHermes:
		return []string{"<tool_call>"}
	case ToolFormatLlama3:
		return []string{"<|python_tag|>"}
	case ToolFormatMistral:
		return []string{"[TOOL_CALLS]"}
	case ToolFormatCommandR:
		return []string{"Action:"}
	case ToolFormatCommandR7B:
		return []string{"<|START_ACTION|>"}
	case ToolFormatFunctionary:
		return []string{"<function=", "<|python_tag|>"}
	case ToolFormatFirefunction:
		return []string{"functools["}
	}
	return nil
}

// leadingJSON reports whether a reply that starts with "{" or "[" is a
// call (Llama 3 writes the call as the whole reply, Mistral-style models
// sometimes drop the marker).
func (f ToolFormat) leadingJSON() bool { return f == ToolFormatLlama3 }
