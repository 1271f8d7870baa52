package app

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine"
)

// Chat is the open conversation.
func (c *Controller) Chat() *Chat { return c.chat }

// Chats is the sidebar list.
func (c *Controller) Chats() []ChatSummary { return c.chats }

// Generating reports a reply in progress.
func (c *Controller) Generating() bool { return c.generating }

// GeneratingHere: the reply in progress belongs to the open conversation.
func (c *Controller) GeneratingHere() bool { return c.generating && c.genChat == c.chat }

// CanSend: a model is loaded and idle.
func (c *Controller) CanSend() bool { return c.phase == PhaseReady && !c.generating }

// Sampling is the current generation settings.
func (c *Controller) Sampling() Sampling { return c.sampling }

func (c *Controller) newChat() *Chat {
	now := c.cfg.Now()
	return &Chat{ID: NewChatID(now), Title: "New chat", Created: now, Updated: now}
}

// NewChat starts an empty conversation (a reply in progress is stopped and
// kept in its own conversation).
func (c *Controller) NewChat() {
	c.saveIfEdited()
	c.cancelGeneration()
	system := c.chat.System // the system prompt carries over
	c.chat = c.newChat()
	c.chat.System = system
	c.changed(ChangeChat | ChangeChats)
}

// OpenChat switches to a saved conversation. The KV cache keeps what the
// two share, so switching costs only the differing suffix.
func (c *Controller) OpenChat(id string) {
	if id == c.chat.ID {
		return
	}
	ch, err := c.store.Load(id)
	if err != nil {
		var dmg *DamagedChatError
		if errors.As(err, &dmg) {
			c.problem(StoreProblem{Damaged: []DamagedFile{dmg.File}})
			c.refreshChats()
		} else {
			c.problem(StoreProblem{Err: err})
		}
		return
	}
	c.saveIfEdited()
	c.cancelGeneration()
	c.chat = ch
	c.changed(ChangeChat | ChangeChats)
}

// SetSystem sets the open conversation's system prompt. It is written with
// the conversation's next save (a send, a switch, closing), not per key.
func (c *Controller) SetSystem(s string) {
	if c.chat.System == s {
		return
	}
	c.chat.System = s
	c.systemDirty = true
}

// saveIfEdited keeps a system prompt edited since the last save.
func (c *Controller) saveIfEdited() {
	if c.systemDirty {
		c.save(c.chat)
	}
}

// Send adds a user message and starts the reply.
func (c *Controller) Send(text string) bool {
	text = strings.TrimRight(text, " \t\r\n")
	if strings.TrimSpace(text) == "" || !c.CanSend() {
		return false
	}
	c.chat.Messages = append(c.chat.Messages, ChatMessage{Role: "user", Content: text})
	c.startReply()
	return true
}

// UseBuiltinTemplate answers a TemplateProblem: the loaded model goes on
// with the built-in template of family (until it is loaded again) and the
// failed reply is generated again.
func (c *Controller) UseBuiltinTemplate(family string) {
	if c.loaded == nil {
		return
	}
	c.switchTemplate = family
	c.loaded.Source = chat.Source{Kind: chat.SourceBuiltin, Family: family, ModelErr: errors.New("it failed on this conversation")}
	c.changed(ChangeLoad)
	if !c.Regenerate() {
		c.switchTemplate = ""
	}
}

// Regenerate replaces the last reply with a new one.
func (c *Controller) Regenerate() bool {
	m := c.chat.Messages
	if !c.CanSend() || len(m) < 2 || m[len(m)-1].Role != "assistant" {
		return false
	}
	c.chat.Messages = m[:len(m)-1]
	c.startReply()
	return true
}

// LastUserIndex is the message Edit changes (-1: none).
func (c *Controller) LastUserIndex() int {
	for i := len(c.chat.Messages) - 1; i >= 0; i-- {
		if c.chat.Messages[i].Role == "user" {
			return i
		}
	}
	return -1
}

// EditLast replaces the last user message, drops what followed it, and
// asks again.
func (c *Controller) EditLast(text string) bool {
	i := c.LastUserIndex()
	if i < 0 || !c.CanSend() || strings.TrimSpace(text) == "" {
		return false
	}
	c.chat.Messages = c.chat.Messages[:i+1]
	c.chat.Messages[i].Content = strings.TrimRight(text, " \t\r\n")
	c.startReply()
	return true
}

// Stop ends the reply in progress; what was generated is kept.
func (c *Controller) Stop() { c.cancelGeneration() }

func (c *Controller) cancelGeneration() {
	if c.generating && c.genCancel != nil {
		c.genCancel()
	}
}

func (c *Controller) startReply() {
	ch := c.chat
	templated := c.remote != nil
	if c.remote != nil {
		ch.Model = c.remote.URL + " · " + c.remote.Model
	} else {
		ch.Model = c.info.Path
		templated = c.loaded.Template
	}
	req := generateRequest{opts: c.genOptions()}
	if templated {
		if ch.System != "" {
			req.msgs = append(req.msgs, chat.Message{Role: "system", Content: ch.System})
		}
		for _, m := range ch.Messages {
			req.msgs = append(req.msgs, chat.Message{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name})
		}
		req.useBuiltin, c.switchTemplate = c.switchTemplate, ""
	} else {
		// No template (e.g. stories260K): the user's text is a prompt to
		// continue.
		req.complete = true
		req.prompt = ch.Messages[len(ch.Messages)-1].Content
	}
	ch.Messages = append(ch.Messages, ChatMessage{Role: "assistant"})
	ctx, cancel := context.WithCancel(context.Background())
	c.genID++
	req.id, req.ctx = c.genID, ctx
	c.genCancel, c.genChat, c.generating = cancel, ch, true
	c.worker.send(req)
	c.save(ch)
	c.changed(ChangeChat | ChangeChats)
}

func (c *Controller) genOptions() chat.GenOptions {
	s := c.sampling.Sampler
	if c.sampling.RandomSeed {
		s.Seed = rand.Uint64()
	}
	return chat.GenOptions{Sampler: s, MaxTokens: c.sampling.MaxTokens}
}

func (c *Controller) finishReply(e replyEvent) {
	if e.id != c.genID || c.genChat == nil {
		return
	}
	ch := c.genChat
	c.generating, c.genChat = false, nil
	if c.genCancel != nil {
		c.genCancel()
		c.genCancel = nil
	}
	if errors.Is(e.err, core.ErrModelFileChanged) {
		// The worker has closed the session: back to the plan, with a
		// dialog offering to load the file again.
		path := c.info.Path
		c.loaded, c.phase = nil, PhasePlanned
		c.problem(FileChangedProblem{Path: path, Err: e.err})
		c.changed(ChangeLoad | ChangePlan)
	}
	last := &ch.Messages[len(ch.Messages)-1]
	if e.text != "" || e.err == nil {
		last.Content = e.text // the worker's full text is authoritative
	}
	last.ToolCalls = e.calls
	st := e.stats
	last.Stats = &ReplyStats{PromptTokens: st.PromptTokens, ReusedTokens: st.ReusedTokens, PrefillTokens: st.PrefillTokens,
		Generated: st.Generated, GenRate: st.GenRate(), PrefillRate: st.PrefillRate(), StopReason: st.StopReason,
		Dropped: st.DroppedMessages, CtxUsed: e.cached, CtxLen: e.nCtx}
	if c.loaded != nil && c.remote == nil {
		last.Stats.Where = c.loaded.Report.Where()
	}
	var tmplErr *chat.ModelTemplateError
	switch {
	case errors.As(e.err, &tmplErr):
		last.Note = fmt.Sprintf("No reply: %v", tmplErr)
		if tmplErr.Fallback != "" {
			c.problem(TemplateProblem{Err: tmplErr.Err, Fallback: tmplErr.Fallback})
		}
	case errors.Is(e.err, engine.ErrInterrupted):
		last.Note = fmt.Sprintf("interrupted: %v — the text so far is kept; Regenerate to try again", e.err)
	case e.err != nil:
		last.Note = fmt.Sprintf("Error: the reply ended early: %v — the conversation is kept; Regenerate to try again", e.err)
	case st.StopReason == chat.StopCancelled:
		last.Note = "stopped"
	case st.StopReason == chat.StopMaxTokens:
		last.Note = fmt.Sprintf("stopped at the %d-token limit (sampling settings)", c.sampling.MaxTokens)
	case st.StopReason == chat.StopContext:
		last.Note = "the context is full: start a new chat or load with a longer context"
	default:
		last.Note = ""
	}
	if st.DroppedMessages > 0 {
		last.Note = strings.TrimPrefix(last.Note+fmt.Sprintf(" · %d oldest messages left out to fit the context", st.DroppedMessages), " · ")
	}
	c.save(ch)
	c.changed(ChangeChat | ChangeChats)
}

// StatsText is the line above the input: tokens, speed, context use.
func (c *Controller) StatsText() string {
	if c.GeneratingHere() {
		last := c.chat.Messages[len(c.chat.Messages)-1]
		return fmt.Sprintf("generating… %d characters", len([]rune(last.Content)))
	}
	for i := len(c.chat.Messages) - 1; i >= 0; i-- {
		if st := c.chat.Messages[i].Stats; st != nil {
			s := fmt.Sprintf("%d tokens · %.1f tok/s · prompt %d (%d reused, %.0f tok/s)", st.Generated, st.GenRate, st.PromptTokens, st.ReusedTokens, st.PrefillRate)
			if st.Where != "" {
				s = st.Where + " · " + s
			}
			if st.CtxLen > 0 {
				s += fmt.Sprintf(" · ctx %d / %d", st.CtxUsed, st.CtxLen)
			}
			return s + " · " + st.StopReason
		}
	}
	return ""
}

func (c *Controller) save(ch *Chat) {
	if len(ch.Messages) == 0 {
		return
	}
	if ch == c.chat {
		c.systemDirty = false
	}
	ch.Title = chatTitle(ch.Messages)
	ch.Updated = c.cfg.Now()
	if err := c.store.Save(ch); err != nil {
		c.problem(StoreProblem{Err: err})
		return
	}
	c.refreshChats()
}

// refreshChats re-reads the store's list; files found damaged are set aside
// and reported.
func (c *Controller) refreshChats() {
	list, damaged, err := c.store.List()
	c.chats = list
	c.changed(ChangeChats)
	if len(damaged) > 0 || err != nil {
		c.problem(StoreProblem{Damaged: damaged, Err: err})
	}
}
