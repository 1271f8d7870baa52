package chat

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// ToolStream splits a streamed reply into the text to show and tool calls.
// Push passes text through as it comes, except text that may be the start
// of a tool call (a prefix of the format's marker, or a Llama 3 reply that
// opens with "{"), which it holds back; from a marker on, everything is
// held until Finish parses it. When the held text does not parse as tool
// calls, Finish gives it back as text: nothing the model wrote is lost.
type ToolStream struct {
	format  ToolFormat
	markers []string        // format.markers(), looked up once
	text    strings.Builder // everything pushed
	emitted int             // bytes of text given out by Push
	callAt  int             // start of the call region; -1 while none
}

// NewToolStream returns a stream for one reply in format f (with
// ToolFormatNone it passes everything through).
func NewToolStream(f ToolFormat) *ToolStream {
	return &ToolStream{format: f, markers: f.markers(), callAt: -1}
}

// Push adds generated text and returns the part that is safe to show now.
func (s *ToolStream) Push(delta string) string {
	s.text.WriteString(delta)
	if s.callAt >= 0 || s.format == ToolFormatNone {
		if s.format == ToolFormatNone {
			s.emitted = s.text.Len()
			return delta
		}
		return ""
	}
	all := s.text.String()
	pending := all[s.emitted:]
	if s.format.leadingJSON() && s.emitted == 0 {
		trimmed := strings.TrimLeftFunc(pending, unicode.IsSpace)
		if trimmed == "" {
			return ""
		}
		if trimmed[0] == '{' || trimmed[0] == '[' {
			s.callAt = 0
			return ""
		}
	}
	first := -1
	for _, m := range s.markers {
		if k := strings.Index(pending, m); k >= 0 && (first < 0 || k < first) {
			first = k
		}
	}
	var out string
	if first >= 0 {
		out = pending[:first]
		s.callAt = s.emitted + first
	} else {
		// A marker may be arriving piece by piece: hold its start back.
		out = pending[:len(pending)-holdBack(pending, s.markers)]
	}
	s.emitted += len(out)
	return out
}

// ToolResult is a finished reply.
type ToolResult struct {
	// Content is the reply's text without the tool calls (all of it when
	// none parsed).
	Content string
	// Tail is the part of Content that Push held back and that is not a
	// call: the caller shows it after the last Push.
	Tail string
	// Calls are the parsed tool calls, in order.
	Calls []ToolCall
	// ParseErr says why held text was not taken as tool calls (nil when
	// it was, or when there was none).
	ParseErr error
}

// Finish ends the reply: it parses the held call region.
func (s *ToolStream) Finish() ToolResult {
	all := s.text.String()
	if s.callAt < 0 {
		return ToolResult{Content: all, Tail: all[s.emitted:]}
	}
	calls, rest, err := parseRegion(s.format, all[s.callAt:])
	if err != nil || len(calls) == 0 {
		if err == nil {
			err = errors.New("no tool call in the marked text")
		}
		return ToolResult{Content: all, Tail: all[s.emitted:], ParseErr: err}
	}
	content := all[:s.callAt]
	if strings.TrimSpace(rest) != "" {
		content += rest
	} else {
		rest = ""
	}
	return ToolResult{Content: content, Tail: rest, Calls: calls}
}

// ParseToolCalls splits a complete reply in format f into text and tool
// calls (see ToolStream).
func ParseToolCalls(f ToolFormat, reply string) ToolResult {
	s := NewToolStream(f)
	s.Push(reply)
	return s.Finish()
}

// ErrToolCallSyntax is wrapped by every tool-call parse failure.
var ErrToolCallSyntax = errors.New("chat: tool call syntax")

func syntaxErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrToolCallSyntax, fmt.Sprintf(format, args...))
}

// parseRegion parses the text from a call marker (or the leading JSON) to
// the end of the reply; rest is text after the calls.
func parseRegion(f ToolFormat, region string) (calls []ToolCall, rest string, err error) {
	switch f {
	case ToolFormatHermes:
		return parseTagged(region, "<tool_call>", "</tool_call>", func(body string) (ToolCall, error) {
			return callFromJSON(body, "name", "arguments")
		})
	case ToolFormatLlama3:
		return parseLlama3(region)
	case ToolFormatMistral:
		return parseMistral(strings.TrimPrefix(region, "[TOOL_CALLS]"))
	case ToolFormatCommandR:
		body := strings.TrimSpace(strings.TrimPrefix(region, "Action:"))
		body = strings.TrimPrefix(body, "```json")
		body = strings.TrimPrefix(body, "```")
		calls, rest, err := jsonArrayCalls(body, "tool_name", "parameters", "")
		rest = strings.TrimPrefix(strings.TrimSpace(rest), "```")
		return dropDirectAnswer(calls), rest, err
	case ToolFormatCommandR7B:
		// The close tag is optional at the end of the reply.
		body, after, _ := strings.Cut(strings.TrimPrefix(region, "<|START_ACTION|>"), "<|END_ACTION|>")
		calls, rest, err := jsonArrayCalls(body, "tool_name", "parameters", "tool_call_id")
		return dropDirectAnswer(calls), rest + after, err
	case ToolFormatFunctionary:
		return parseFunctionary(region)
	case ToolFormatFirefunction:
		return jsonArrayCalls("["+strings.TrimPrefix(region, "functools["), "name", "arguments", "")
	}
	return nil, region, syntaxErr("no tool-call format")
}

// parseTagged reads open body close, repeated (whitespace between); a
// missing last close tag is accepted at the end of the reply.
func parseTagged(text, open, close string, body func(string) (ToolCall, error)) ([]ToolCall, string, error) {
	var calls []ToolCall
	rest := text
	for {
		trimmed := strings.TrimLeftFunc(rest, unicode.IsSpace)
		if !strings.HasPrefix(trimmed, open) {
			break
		}
		inner := trimmed[len(open):]
		end := strings.Index(inner, close)
		next := ""
		if end < 0 {
			end = len(inner)
		} else {
			next = inner[end+len(close):]
		}
		call, err := body(inner[:end])
		if err != nil {
			return nil, text, err
		}
		calls = append(calls, call)
		rest = next
	}
	return calls, rest, nil
}

// callFromJSON reads one {"<nameKey>": …, "<argsKey>": {…}} object.
func callFromJSON(text, nameKey, argsKey string) (ToolCall, error) {
	dec := json.NewDecoder(strings.NewReader(strings.TrimSpace(text)))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return ToolCall{}, syntaxErr("%v", err)
	}
	if dec.More() {
		return ToolCall{}, syntaxErr("text after the call's JSON")
	}
	return callFromObject(obj, nameKey, argsKey, "")
}

func callFromObject(obj map[string]json.RawMessage, nameKey, argsKey, idKey string) (ToolCall, error) {
	var name string
	if err := json.Unmarshal(obj[nameKey], &name); err != nil || name == "" {
		return ToolCall{}, syntaxErr("no %q string in the call", nameKey)
	}
	args, ok := obj[argsKey]
	if !ok && argsKey == "parameters" {
		args, ok = obj["arguments"]
	}
	argText := "{}"
	if ok {
		a, err := argumentsText(args)
		if err != nil {
			return ToolCall{}, err
		}
		argText = a
	}
	call := ToolCall{Type: "function", Function: FunctionCall{Name: name, Arguments: argText}}
	if idKey != "" {
		var id any
		if json.Unmarshal(obj[idKey], &id) == nil && id != nil {
			call.ID = fmt.Sprint(id)
		}
	}
	if raw, ok := obj["id"]; ok && call.ID == "" {
		_ = json.Unmarshal(raw, &call.ID)
	}
	if call.ID == "" {
		call.ID = NewToolCallID()
	}
	return call, nil
}

// argumentsText is the arguments as compact JSON object text; a JSON string
// holding an object (some models write it so) is unwrapped.
func argumentsText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", syntaxErr("arguments: %v", err)
		}
		raw = []byte(strings.TrimSpace(s))
	}
	if len(raw) == 0 || raw[0] != '{' {
		return "", syntaxErr("arguments are not a JSON object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", syntaxErr("arguments: %v", err)
	}
	return buf.String(), nil
}

// jsonArrayCalls reads a JSON array of call objects at the start of text.
func jsonArrayCalls(text, nameKey, argsKey, idKey string) ([]ToolCall, string, error) {
	text = strings.TrimLeftFunc(text, unicode.IsSpace)
	dec := json.NewDecoder(strings.NewReader(text))
	var objs []map[string]json.RawMessage
	if err := dec.Decode(&objs); err != nil {
		return nil, text, syntaxErr("%v", err)
	}
	calls := make([]ToolCall, 0, len(objs))
	for _, obj := range objs {
		call, err := callFromObject(obj, nameKey, argsKey, idKey)
		if err != nil {
			return nil, text, err
		}
		calls = append(calls, call)
	}
	return calls, text[dec.InputOffset():], nil
}

// dropDirectAnswer removes Command R's pseudo-tool that means "no tool".
func dropDirectAnswer(calls []ToolCall) []ToolCall {
	out := calls[:0]
	for _, c := range calls {
		switch c.Function.Name {
		case "directly_answer", "directly-answer", "direct-injected-document":
			continue
		}
		out = append(out, c)
	}
	return out
}

// parseLlama3 reads {"name": …, "parameters": {…}} (one, or several
// separated by ";"), after an optional <|python_tag|>, or a built-in tool
// call name.call(key=value, …).
func parseLlama3(region string) ([]ToolCall, string, error) {
	body := strings.TrimSpace(strings.TrimPrefix(region, "<|python_tag|>"))
	if strings.HasPrefix(body, "{") {
		var calls []ToolCall
		for _, part := range splitTopLevel(body, ';') {
			call, err := callFromJSON(part, "name", "parameters")
			if err != nil {
				return nil, region, err
			}
			calls = append(calls, call)
		}
		return calls, "", nil
	}
	if strings.HasPrefix(body, "[") {
		return jsonArrayCalls(body, "name", "parameters", "")
	}
	call, err := parseBuiltinCall(body)
	if err != nil {
		return nil, region, err
	}
	return []ToolCall{call}, "", nil
}

// splitTopLevel splits s at sep outside JSON strings and brackets.
func splitTopLevel(s string, sep byte) []string {
	var parts []string
	depth, inStr, esc, start := 0, false, false, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		case c == sep && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	if tail := strings.TrimSpace(s[start:]); tail != "" || len(parts) == 0 {
		parts = append(parts, s[start:])
	}
	return parts
}

// parseBuiltinCall reads Llama 3.1's built-in tool syntax,
// brave_search.call(query="…"), into a call with JSON arguments.
func parseBuiltinCall(s string) (ToolCall, error) {
	open := strings.Index(s, ".call(")
	if open <= 0 || !strings.HasSuffix(s, ")") {
		return ToolCall{}, syntaxErr("not a name.call(…) built-in tool call")
	}
	name := s[:open]
	for _, r := range name {
		if !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return ToolCall{}, syntaxErr("tool name %q", name)
		}
	}
	args := s[open+len(".call(") : len(s)-1]
	var obj bytes.Buffer
	obj.WriteByte('{')
	for i, kv := range splitPyArgs(args) {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return ToolCall{}, syntaxErr("argument %q is not key=value", kv)
		}
		val, err := pyLiteralJSON(v)
		if err != nil {
			return ToolCall{}, err
		}
		if i > 0 {
			obj.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		obj.Write(key)
		obj.WriteByte(':')
		obj.WriteString(val)
	}
	obj.WriteByte('}')
	return ToolCall{ID: NewToolCallID(), Type: "function", Function: FunctionCall{Name: name, Arguments: obj.String()}}, nil
}

// splitPyArgs splits Python call arguments at top-level commas.
func splitPyArgs(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var parts []string
	var quote byte
	depth, start, esc := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case quote != 0 && c == '\\':
			esc = true
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// pyLiteralJSON converts a Python literal (string, number, True/False/None)
// to JSON.
func pyLiteralJSON(v string) (string, error) {
	switch v {
	case "True":
		return "true", nil
	case "False":
		return "false", nil
	case "None":
		return "null", nil
	}
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		inner := v[1 : len(v)-1]
		if v[0] == '\'' {
			inner = strings.ReplaceAll(strings.ReplaceAll(inner, `\'`, `'`), `"`, `\"`)
		}
		s, err := strconv.Unquote(`"` + inner + `"`)
		if err != nil {
			return "", syntaxErr("string %s: %v", v, err)
		}
		b, _ := json.Marshal(s)
		return string(b), nil
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v, nil
	}
	if json.Valid([]byte(v)) {
		return v, nil
	}
	return "", syntaxErr("argument value %s is not a literal", v)
}

// parseMistral reads the JSON array after [TOOL_CALLS], or the later
// name[ARGS]{…} form (repeated with [TOOL_CALLS] between calls).
func parseMistral(body string) ([]ToolCall, string, error) {
	if strings.HasPrefix(strings.TrimSpace(body), "[") {
		return jsonArrayCalls(body, "name", "arguments", "")
	}
	var calls []ToolCall
	for _, part := range strings.Split(body, "[TOOL_CALLS]") {
		name, args, ok := strings.Cut(part, "[ARGS]")
		if !ok {
			return nil, body, syntaxErr("neither a JSON array nor name[ARGS]{…} after [TOOL_CALLS]")
		}
		argText, err := argumentsText(json.RawMessage(strings.TrimSpace(args)))
		if err != nil {
			return nil, body, err
		}
		calls = append(calls, ToolCall{ID: NewToolCallID(), Type: "function", Function: FunctionCall{Name: strings.TrimSpace(name), Arguments: argText}})
	}
	return calls, "", nil
}

// parseFunctionary reads <function=name>{…}</function> calls and the
// <|python_tag|>code form (a call of the python tool).
func parseFunctionary(region string) ([]ToolCall, string, error) {
	if strings.HasPrefix(region, "<|python_tag|>") {
		code := strings.TrimPrefix(region, "<|python_tag|>")
		args, _ := json.Marshal(map[string]string{"code": code})
		return []ToolCall{{ID: NewToolCallID(), Type: "function", Function: FunctionCall{Name: "python", Arguments: string(args)}}}, "", nil
	}
	return parseTagged(region, "<function=", "</function>", func(body string) (ToolCall, error) {
		name, args, ok := strings.Cut(body, ">")
		if !ok || name == "" {
			return ToolCall{}, syntaxErr("<function= without a name")
		}
		argText, err := argumentsText(json.RawMessage(strings.TrimSpace(args)))
		if err != nil {
			return ToolCall{}, err
		}
		return ToolCall{ID: NewToolCallID(), Type: "function", Function: FunctionCall{Name: name, Arguments: argText}}, nil
	})
}

// NewToolCallID returns a fresh call id of 9 letters or digits (Mistral's
// templates refuse any other shape; OpenAI clients accept any string).
func NewToolCallID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [9]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}
