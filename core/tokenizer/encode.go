package tokenizer

import (
	"fmt"
	"strings"
)

// fragment is a piece of the input: either raw text [start,end) still to be
// tokenized, or a special token already recognized (tok >= 0).
type fragment struct {
	tok        int32
	start, end int
}

// Encode tokenizes text as llama_tokenize(vocab, text, addSpecial,
// parseSpecial) does.
//
// addSpecial adds BOS (when AddBOS) and EOS (when AddEOS); for WordPiece it
// adds [CLS] and [SEP]. parseSpecial lets control tokens written in text
// (e.g. "<|im_start|>" from a chat template) become their ids; leave it false
// for user text. User-defined tokens are always matched, as in llama.cpp and
// Hugging Face's added tokens: several vocabularies (MPT's whitespace runs,
// DeepSeek's byte tokens) tokenize ordinary text through them.
//
// For SPM a single space is prepended to each text fragment that starts the
// input or follows a special token (the "dummy prefix"), so Decode(Encode(s))
// is " "+s there; an empty text gives no tokens at all.
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	return t.encodeFrags(text, t.partition(text, parseSpecial), addSpecial)
}

// Part is a piece of a text to encode. Special says whether control-token
// text inside it becomes token ids: true for a chat template's own text,
// false for what a user typed, so "<|im_start|>" in a message stays text.
type Part struct {
	Text    string
	Special bool
}

// EncodeParts encodes the concatenation of parts as Encode would with
// parseSpecial, except that special tokens are recognised only inside parts
// marked Special. Adjacent text fragments are joined before tokenizing, so
// when no user part contains special-token text the result equals
// Encode(whole, addSpecial, true).
func (t *Tokenizer) EncodeParts(parts []Part, addSpecial bool) ([]int32, error) {
	var sb strings.Builder
	var frags []fragment
	for _, p := range parts {
		off := sb.Len()
		sb.WriteString(p.Text)
		for _, f := range t.partition(p.Text, p.Special) {
			if f.tok < 0 {
				f.start += off
				f.end += off
				if n := len(frags); n > 0 && frags[n-1].tok < 0 && frags[n-1].end == f.start {
					frags[n-1].end = f.end
					continue
				}
			}
			frags = append(frags, f)
		}
	}
	return t.encodeFrags(sb.String(), frags, addSpecial)
}

func (t *Tokenizer) encodeFrags(text string, frags []fragment, addSpecial bool) ([]int32, error) {
	out := make([]int32, 0, len(text)/3+4)
	var err error
	switch t.kind {
	case SPM:
		if addSpecial && t.addBOS {
			out = append(out, t.bos)
		}
		prevSpecial := true
		var buf []byte
		for _, f := range frags {
			if f.tok >= 0 {
				out = append(out, f.tok)
				prevSpecial = true
				continue
			}
			buf = buf[:0]
			if t.addSpacePrefix && prevSpecial {
				buf = append(buf, ' ')
			}
			buf = append(buf, text[f.start:f.end]...)
			out = t.encodeSPM(escapeSpaces(buf), out)
			prevSpecial = false
		}
		if addSpecial && t.addEOS {
			out = append(out, t.eos)
		}
	case BPE:
		if addSpecial && t.addBOS {
			out = append(out, t.bos)
		}
		for _, f := range frags {
			if f.tok >= 0 {
				out = append(out, f.tok)
				continue
			}
			if out, err = t.encodeBPE(text[f.start:f.end], out); err != nil {
				return nil, err
			}
		}
		if addSpecial && t.addEOS {
			out = append(out, t.eos)
		}
	case WPM:
		if addSpecial {
			out = append(out, t.bos)
		}
		for _, f := range frags {
			if f.tok >= 0 {
				out = append(out, f.tok)
				continue
			}
			out = t.encodeWPM(text[f.start:f.end], out)
		}
		if addSpecial {
			out = append(out, t.sep)
		}
	default:
		return nil, fmt.Errorf("tokenizer: kind %v cannot encode", t.kind)
	}
	return out, nil
}

// partition splits text at occurrences of special tokens (llama.cpp's
// tokenizer_st_partition): longest token texts first, each occurrence
// left to right. Control and unknown tokens take part only with
// parseSpecial; user-defined ones always do.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	if text == "" {
		return nil
	}
	present := t.specialsIn(text, parseSpecial)
	if present == nil {
		return []fragment{{tok: NoToken, start: 0, end: len(text)}}
	}
	frags := []fragment{{tok: NoToken, start: 0, end: len(text)}}
	var next []fragment
	for k, id := range t.specials {
		if !present[k] {
			continue
		}
		a := t.attrs[id]
		tokText := t.texts[id]
		next = next[:0]
		for _, f := range frags {
			if f.tok >= 0 {
				next = append(next, f)
				continue
			}
			pos := f.start
			for pos < f.end {
				i := strings.Index(text[pos:f.end], tokText)
				if i < 0 {
					break
				}
				match := pos + i
				leftEnd := match
				if a&attrLStrip != 0 {
					for leftEnd > pos && isCSpace(text[leftEnd-1]) {
						leftEnd--
					}
				}
				if leftEnd > pos {
					next = append(next, fragment{tok: NoToken, start: pos, end: leftEnd})
				}
				next = append(next, fragment{tok: id})
				pos = match + len(tokText)
				if a&attrRStrip != 0 {
					for pos < f.end && isCSpace(text[pos]) {
						pos++
					}
				}
			}
			if pos < f.end {
				next = append(next, fragment{tok: NoToken, start: pos, end: f.end})
			}
		}
		frags, next = next, frags
	}
	return frags
}

// specialsIn marks the entries of t.specials that occur in text and may be
// matched; nil when none does. A token absent from the whole text cannot
// occur in any fragment, so partition only needs to look for these.
func (t *Tokenizer) specialsIn(text string, parseSpecial bool) []bool {
	var present []bool
	for i := 0; i < len(text); i++ {
		for _, k := range t.specialsByByte[text[i]] {
			if present != nil && present[k] {
				continue
			}
			id := t.specials[k]
			if !parseSpecial && t.attrs[id]&(attrControl|attrUnknown) != 0 {
				continue
			}
			if strings.HasPrefix(text[i:], t.texts[id]) {
				if present == nil {
					present = make([]bool, len(t.specials))
				}
				present[k] = true
			}
		}
	}
	return present
}

// isCSpace is C's isspace in the "C" locale.
func isCSpace(b byte) bool {
	return b == ' ' || (b >= '\t' && b <= '\r')
}

// escapeSpaces replaces every ' ' with U+2581 (▁), SentencePiece's visible
// space.
func escapeSpaces(b []byte) string {
	n := 0
	for _, c := range b {
		if c == ' ' {
			n++
		}
	}
	if n == 0 {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 2*n)
	for _, c := range b {
		if c == ' ' {
			sb.WriteString("\u2581")
		} else {
			sb.WriteByte(c)
		}
	}
	return sb.String()
}
