//go:build !nogui

package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/ui/app"
)

// messageView is one turn in the list. Assistant text is Markdown; the
// user's text is shown as typed.
type messageView struct {
	role    string
	content string
	who     *widget.Label
	body    *widget.RichText
	// think shows a reasoning model's think block, collapsed, above the
	// answer (hidden when the reply has none).
	think     *widget.Accordion
	thinkItem *widget.AccordionItem
	thinkText *widget.Label
	// thinking and reasoning are what the think item shows, so a token
	// of the answer leaves it alone.
	thinking  bool
	reasoning string
	note      *widget.Label
	copyBtn   *widget.Button
	regenBtn  *widget.Button
	editBtn   *widget.Button
	box       *fyne.Container
	// calls lists an assistant turn's tool calls (nil without calls);
	// result is a tool turn's collapsible result (nil for other roles).
	calls  *widget.Accordion
	result *widget.Accordion
}

func plainRichText(s string) *widget.RichText {
	rt := widget.NewRichText(&widget.TextSegment{Text: s, Style: widget.RichTextStyleParagraph})
	rt.Wrapping = fyne.TextWrapWord
	return rt
}

// newMessageView shows one message; results maps tool call ids to the
// tool turns that answer them, shown beside their calls.
func newMessageView(m app.ChatMessage, results map[string]app.ChatMessage) *messageView {
	mv := &messageView{role: m.Role, content: m.Content}
	mv.who = widget.NewLabelWithStyle("you", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	if m.Role == "tool" {
		mv.who.SetText("tool")
		mv.who.Importance = widget.LowImportance
		mv.body = plainRichText("")
		mv.body.Hide()
		mv.result = widget.NewAccordion(widget.NewAccordionItem(toolResultTitle(m), jsonText(m.Content)))
	} else if m.Role == "assistant" {
		mv.who.SetText("model")
		mv.who.Importance = widget.HighImportance
		mv.body = widget.NewRichText()
		mv.body.Wrapping = fyne.TextWrapWord
		mv.thinkText = wrapped("")
		mv.thinkText.Importance = widget.LowImportance
		mv.thinkItem = widget.NewAccordionItem("Reasoning", mv.thinkText)
		mv.think = widget.NewAccordion(mv.thinkItem)
		mv.think.Hide()
		mv.showReply(m.Content)
	} else {
		mv.body = plainRichText(m.Content)
	}
	mv.note = widget.NewLabel(m.Note)
	mv.note.Wrapping = fyne.TextWrapWord
	mv.note.Importance = widget.WarningImportance
	if m.Note == "" {
		mv.note.Hide()
	} else if m.Note == "stopped" {
		mv.note.Importance = widget.LowImportance
	}
	mv.copyBtn = widget.NewButtonWithIcon("", theme.ContentCopyIcon(), nil)
	mv.copyBtn.Importance = widget.LowImportance
	mv.regenBtn = widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), nil)
	mv.regenBtn.Importance = widget.LowImportance
	mv.regenBtn.Hide()
	mv.editBtn = widget.NewButtonWithIcon("", theme.DocumentCreateIcon(), nil)
	mv.editBtn.Importance = widget.LowImportance
	mv.editBtn.Hide()

	actions := container.NewHBox(mv.copyBtn, mv.regenBtn, mv.editBtn)
	whoCol := container.NewVBox(mv.who)
	bodyCol := container.NewVBox(mv.body)
	if mv.think != nil {
		bodyCol = container.NewVBox(mv.think, mv.body)
	}
	if len(m.ToolCalls) > 0 {
		mv.calls = toolCallsView(m.ToolCalls, results)
		bodyCol.Add(mv.calls)
	}
	if mv.result != nil {
		bodyCol.Add(mv.result)
	}
	bodyCol.Add(mv.note)
	row := container.NewBorder(nil, nil, container.New(layout.NewGridWrapLayout(fyne.NewSize(64, 30)), whoCol), container.NewVBox(actions), bodyCol)
	if m.Role == "user" {
		bg := canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
		bg.CornerRadius = theme.InputRadiusSize()
		mv.box = container.NewStack(bg, row)
	} else {
		mv.box = container.NewStack(row)
	}
	return mv
}

// setContent updates a reply as it streams.
func (mv *messageView) setContent(s string) {
	if s == mv.content {
		return
	}
	mv.content = s
	if mv.role == "assistant" {
		mv.showReply(s)
	} else {
		mv.body.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: s, Style: widget.RichTextStyleParagraph}}
		mv.body.Refresh()
	}
}

// showReply renders an assistant reply: the think block of a reasoning
// model (Qwen3, DeepSeek-R1) in the collapsed "Reasoning" item — titled
// "Thinking…" while it streams — and the answer as Markdown.
func (mv *messageView) showReply(s string) {
	r := chat.SplitReasoning(s)
	if r.Thinking != mv.thinking || r.Reasoning != mv.reasoning {
		mv.thinking, mv.reasoning = r.Thinking, r.Reasoning
		switch {
		case r.Thinking:
			mv.thinkItem.Title = "Thinking…"
		case r.Reasoning != "":
			mv.thinkItem.Title = fmt.Sprintf("Reasoning (%d words)", len(strings.Fields(r.Reasoning)))
		}
		if r.Thinking || r.Reasoning != "" {
			mv.thinkText.SetText(r.Reasoning)
			mv.think.Show()
			mv.think.Refresh()
		} else {
			mv.think.Hide()
		}
	}
	setMarkdown(mv.body, r.Answer)
}

// bodyText is the message's text as shown (for tests).
func (mv *messageView) bodyText() string { return mv.body.String() }

// setMarkdown renders Markdown into rt. The parser splits plain text at
// characters that might start inline markup ("!", quotes, …); each piece
// becomes its own text object, drawn at a fractional x and so visibly
// blurred. Neighbouring pieces of the same style are joined again.
func setMarkdown(rt *widget.RichText, s string) {
	rt.ParseMarkdown(s)
	rt.Segments = mergeTextSegments(rt.Segments)
	rt.Refresh()
}

func mergeTextSegments(segs []widget.RichTextSegment) []widget.RichTextSegment {
	out := segs[:0]
	for _, seg := range segs {
		switch s := seg.(type) {
		case *widget.ParagraphSegment:
			s.Texts = mergeTextSegments(s.Texts)
		case *widget.ListSegment:
			for _, it := range s.Items {
				if p, ok := it.(*widget.ParagraphSegment); ok {
					p.Texts = mergeTextSegments(p.Texts)
				}
			}
		case *widget.TextSegment:
			if n := len(out); n > 0 {
				if prev, ok := out[n-1].(*widget.TextSegment); ok && prev.Style == s.Style && s.Style.Inline {
					prev.Text += s.Text
					continue
				}
			}
		}
		out = append(out, seg)
	}
	return out
}

// toolCallsView lists tool calls, each a collapsible item whose detail is
// the call's arguments with its result beside them (when the conversation
// holds it).
func toolCallsView(calls []chat.ToolCall, results map[string]app.ChatMessage) *widget.Accordion {
	acc := widget.NewAccordion()
	acc.MultiOpen = true
	for _, c := range calls {
		var result *widget.Label
		if r, ok := results[c.ID]; ok && c.ID != "" {
			result = jsonText(r.Content)
		} else {
			result = widget.NewLabel("(no result yet)")
			result.Importance = widget.LowImportance
		}
		detail := container.NewGridWithColumns(2, titled("arguments", jsonText(c.Function.Arguments)), titled("result", result))
		acc.Append(widget.NewAccordionItem(toolCallTitle(c), detail))
	}
	return acc
}

// titled puts a bold name above o.
func titled(name string, o fyne.CanvasObject) *fyne.Container {
	return container.NewVBox(widget.NewLabelWithStyle(name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), o)
}

// jsonText shows a tool call's arguments or a tool's result.
func jsonText(s string) *widget.Label { return monoText(prettyJSON(s)) }

// toolCallTitle is a call in one line: name(arguments), shortened.
func toolCallTitle(c chat.ToolCall) string {
	args := compactJSON(c.Function.Arguments)
	if r := []rune(args); len(r) > 60 {
		args = string(r[:59]) + "…"
	}
	return "Tool call: " + c.Function.Name + " " + args
}

func toolResultTitle(m app.ChatMessage) string {
	if m.Name != "" {
		return "Result of " + m.Name
	}
	return "Tool result"
}

func monoText(s string) *widget.Label {
	l := widget.NewLabelWithStyle(s, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	l.Wrapping = fyne.TextWrapWord
	return l
}

// prettyJSON indents JSON text; anything else is shown as it is.
func prettyJSON(s string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") != nil {
		return s
	}
	return b.String()
}

func compactJSON(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}
