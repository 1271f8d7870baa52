package chat

import "strings"

// Reasoning models (Qwen3, DeepSeek-R1 and their distillations) write their
// chain of thought between <think> and </think> before the answer. Some
// templates open the block in the generation prompt themselves (the
// DeepSeek-R1 distills end it with "<think>\n"), so the reply then holds only
// the closing tag.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// Reply is an assistant reply split into its reasoning and its answer.
type Reply struct {
	// Reasoning is the text of the think block, trimmed; "" when there is
	// none.
	Reasoning string
	// Answer is what follows the block (or the whole reply without one),
	// with the blank lines after the block removed.
	Answer string
	// Thinking is true while the block is open: a streaming reply that has
	// not closed it yet (everything so far is Reasoning).
	Thinking bool
}

// SplitReasoning splits a reply, complete or still streaming, into its
// reasoning and its answer. A think block counts only at the start of the
// reply (after white space): a "<think>" later in the answer is text.
// A reply that closes a block it never opened — the template opened it —
// has everything before the close as reasoning.
func SplitReasoning(text string) Reply {
	lead := strings.TrimLeft(text, " \t\r\n")
	if rest, ok := strings.CutPrefix(lead, thinkOpen); ok {
		reasoning, answer, closed := strings.Cut(rest, thinkClose)
		if !closed {
			// A streaming reply may end in part of "</think>": hold it back.
			return Reply{Reasoning: strings.TrimSpace(reasoning[:len(reasoning)-holdBack(reasoning, []string{thinkClose})]), Thinking: true}
		}
		return Reply{Reasoning: strings.TrimSpace(reasoning), Answer: strings.TrimLeft(answer, "\r\n")}
	}
	if strings.HasPrefix(thinkOpen, lead) && lead != "" {
		// "<thi" so far: the start of a block, nothing to show yet.
		return Reply{Thinking: true}
	}
	if reasoning, answer, ok := strings.Cut(text, thinkClose); ok && !strings.Contains(reasoning, thinkOpen) {
		return Reply{Reasoning: strings.TrimSpace(reasoning), Answer: strings.TrimLeft(answer, "\r\n")}
	}
	return Reply{Answer: text}
}
