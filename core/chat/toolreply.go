package chat

import (
	"context"
	"strings"
)

// StopToolCalls is the stop reason of a reply that ended in tool calls
// (the OpenAI finish_reason "tool_calls").
const StopToolCalls = "tool calls"

// keptControlText maps the control tokens whose text is a tool-call marker
// of the template's format to that text, when the request has tools: the
// decoder renders control tokens as nothing, and the parser needs them.
func (c *Conversation) keptControlText(opts GenOptions) map[int32]string {
	if opts.Tools == nil || c.tmpl == nil {
		return nil
	}
	keep := map[int32]string{}
	format := c.tmpl.ToolFormat()
	markers := format.markers()
	if format == ToolFormatCommandR7B {
		markers = append(markers, "<|END_ACTION|>")
	}
	for _, m := range markers {
		if id, ok := c.tok.TokenID(m); ok && c.tok.IsControl(id) {
			keep[id] = m
		}
	}
	return keep
}

// ReplyMessage is Reply for a conversation with tools (opts.Tools): the
// reply is parsed in the template's tool-call format, emit sees only the
// text that is not a call (streaming-safe: a possible call is held back),
// and the result is the assistant message with its Content and ToolCalls.
// A reply whose calls do not parse is returned as text. With calls, the
// stop reason is StopToolCalls.
func (c *Conversation) ReplyMessage(ctx context.Context, msgs []Message, opts GenOptions, emit func(Event)) (Message, Stats, error) {
	format := ToolFormatNone
	if opts.Tools != nil {
		format = c.tmpl.ToolFormat()
	}
	stream := NewToolStream(format)
	_, st, err := c.Reply(ctx, msgs, opts, func(ev Event) {
		if shown := stream.Push(ev.Text); (shown != "" || ev.Text == "") && emit != nil {
			emit(Event{Text: shown, Token: ev.Token})
		}
	})
	res := stream.Finish()
	if res.Tail != "" && emit != nil {
		emit(Event{Text: res.Tail, Token: -1})
	}
	msg := Message{Role: "assistant", Content: res.Content, ToolCalls: res.Calls}
	if len(res.Calls) > 0 {
		msg.Content = strings.TrimSpace(res.Content)
		if st.StopReason == StopEOG || st.StopReason == StopString {
			st.StopReason = StopToolCalls
		}
	}
	return msg, st, err
}
