package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/internal/coretest"
	"github.com/minfer/minfer/internal/ggtest"
)

func loadLocal(t *testing.T, path string) *Local {
	t.Helper()
	none, err := devices.ParseFakeDevice("none")
	if err != nil {
		t.Fatal(err)
	}
	s, err := core.Load(context.Background(), path, core.LoadOptions{Threads: 1, PlanOptions: core.PlanOptions{Ctx: 256,
		Device: func() devices.DeviceMemory { return none }}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	l, err := NewLocal(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

const tools = `[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]`

// A model without a chat template cannot be given tools; one with a
// template renders them and answers, and a conversation holding a tool
// round trip is rendered (chatml's own template cannot render a tool-call
// turn without content, as Python jinja2 cannot: the error says so).
func TestLocalReplyMessage(t *testing.T) {
	opts := chat.GenOptions{Sampler: chat.GreedySamplerSettings(), MaxTokens: 4, Tools: []byte(tools)}
	ask := []chat.Message{{Role: "user", Content: "Weather in Paris?"}}

	plain := loadLocal(t, ggtest.Path(t, "models", "stories260K.gguf"))
	if _, _, err := plain.ReplyMessage(context.Background(), ask, opts, nil); !errors.Is(err, ErrToolsUnsupported) {
		t.Errorf("no template, with tools: %v, want ErrToolsUnsupported", err)
	}
	noTools := opts
	noTools.Tools = nil
	if m, _, err := plain.ReplyMessage(context.Background(), ask, noTools, nil); err != nil || m.Role != "assistant" || m.Content == "" {
		t.Errorf("no template, no tools: %+v, %v", m, err)
	}

	templated := loadLocal(t, coretest.WithChatML(t, ggtest.Path(t, "models", "stories260K.gguf")))
	m, st, err := templated.ReplyMessage(context.Background(), ask, opts, nil)
	if err != nil || m.Content == "" || len(m.ToolCalls) != 0 || st.StopReason != chat.StopMaxTokens {
		t.Errorf("chatml with tools: %+v %q %v", m, st.StopReason, err)
	}
	roundTrip := append(ask,
		chat.Message{Role: "assistant", ToolCalls: []chat.ToolCall{{ID: "c1", Type: "function", Function: chat.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}},
		chat.Message{Role: "tool", ToolCallID: "c1", Name: "get_weather", Content: "21"})
	// The chatml template cannot render the call: Local switches to the
	// built-in chatml template (which writes calls as text), says why,
	// and answers; with AskBeforeFallback it returns the error instead.
	templated.AskBeforeFallback = true
	_, _, err = templated.ReplyMessage(context.Background(), roundTrip, opts, nil)
	var mte *chat.ModelTemplateError
	if !errors.As(err, &mte) || !strings.Contains(err.Error(), "has no attribute 'content'") || mte.Fallback != chat.FamilyChatML {
		t.Errorf("chatml round trip: %v, want the template's UndefinedError with the chatml fallback", err)
	}
	templated.AskBeforeFallback = false
	var heard string
	templated.OnTemplateFallback = func(err error, family string) { heard = family + ": " + err.Error() }
	if m, _, err := templated.ReplyMessage(context.Background(), roundTrip, opts, nil); err != nil || m.Content == "" {
		t.Errorf("chatml round trip with the fallback: %+v, %v", m, err)
	}
	if !strings.HasPrefix(heard, chat.FamilyChatML+": ") || !strings.Contains(heard, "has no attribute 'content'") {
		t.Errorf("the fallback was not reported: %q", heard)
	}
}
