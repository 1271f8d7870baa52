package tokenizer

import "unicode"

// encodeWPM is llm_tokenizer_wpm_session: BERT normalization and word
// splitting, then greedy longest-match WordPiece over "▁"+word (the
// converter stores word-initial pieces with a ▁ prefix and continuation
// pieces bare). A word that cannot be covered becomes one UNK.
func (t *Tokenizer) encodeWPM(text string, out []int32) []int32 {
	for _, word := range t.wpmWords(text) {
		w := "\u2581" + word
		n := len(w)
		mark := len(out)
		for i := 0; i < n; i++ {
			matched := false
			for j := min(n, i+t.maxTokenLen+1); j > i; j-- {
				if id, ok := t.ids[w[i:j]]; ok {
					out = append(out, id)
					matched = true
					i = j - 1
					break
				}
			}
			if !matched {
				out = out[:mark]
				break
			}
		}
		if len(out) == mark && t.unk != NoToken {
			out = append(out, t.unk)
		}
	}
	return out
}

// wpmWords is the BERT pre-processing: optional accent stripping (NFD base
// character, marks dropped) and lowercasing; whitespace separates words;
// control characters vanish; punctuation, ASCII symbols and CJK ideographs
// are words of their own.
func (t *Tokenizer) wpmWords(text string) []string {
	var words []string
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	for _, c := range codepoints(text) {
		if t.wpmStripAccents {
			c = nfdBase(c)
		}
		f := flagsOf(c)
		if f.isWhitespace() {
			flush()
			continue
		}
		if c == 0 || c == replacementChar || f&flagControl != 0 {
			continue
		}
		if t.wpmStripAccents && f&flagMark != 0 {
			continue
		}
		out := c
		if t.wpmLowercase {
			out = unicode.ToLower(c)
		}
		if f&flagPunct != 0 || (c < 0x7F && f&flagSymbol != 0) || isCJKIdeograph(c) {
			flush()
			words = append(words, string(appendCpt(nil, out)))
			continue
		}
		cur = appendCpt(cur, out)
	}
	flush()
	return words
}

// isCJKIdeograph is BERT's _is_chinese_char (with its 0x2B920 quirk).
func isCJKIdeograph(c rune) bool {
	return (c >= 0x4E00 && c <= 0x9FFF) ||
		(c >= 0x3400 && c <= 0x4DBF) ||
		(c >= 0x20000 && c <= 0x2A6DF) ||
		(c >= 0x2A700 && c <= 0x2B73F) ||
		(c >= 0x2B740 && c <= 0x2B81F) ||
		(c >= 0x2B920 && c <= 0x2CEAF) ||
		(c >= 0xF900 && c <= 0xFAFF) ||
		(c >= 0x2F800 && c <= 0x2FA1F)
}
