package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// buildPieces renders every token once, as token_to_piece with
// special=true: special tokens as their text, SPM/WPM ▁ as a space, byte
// tokens as the raw byte, GPT-2 byte-level text mapped back to bytes.
func (t *Tokenizer) buildPieces() {
	t.pieces = make([][]byte, len(t.texts))
	for id, text := range t.texts {
		a := t.attrs[id]
		var p []byte
		switch {
		case a&(attrUnknown|attrControl|attrUserDefined) != 0:
			p = []byte(text)
		case a&attrNormal != 0:
			if t.kind == BPE {
				p = decodeByteLevel(text)
			} else {
				p = []byte(strings.ReplaceAll(text, "\u2581", " "))
			}
		case a&attrByte != 0:
			if b, ok := parseByteToken(text); ok {
				p = []byte{b}
			} else if t.kind == BPE {
				p = decodeByteLevel(text)
			}
		}
		t.pieces[id] = p
	}
}

// parseByteToken reads SentencePiece's "<0xNN>".
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	var v byte
	for _, c := range []byte(s[3:5]) {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | (c - '0')
		case c >= 'A' && c <= 'F':
			v = v<<4 | (c - 'A' + 10)
		case c >= 'a' && c <= 'f':
			v = v<<4 | (c - 'a' + 10)
		default:
			return 0, false
		}
	}
	return v, true
}

// decodeByteLevel is llama_decode_text: each codepoint of a GPT-2
// byte-level token stands for one byte. A codepoint outside the mapping is
// written as llama.cpp writes it: "[UNK_BYTE_0x<hex>" + token text + "]".
func decodeByteLevel(text string) []byte {
	out := make([]byte, 0, len(text))
	for _, c := range codepoints(text) {
		if b, ok := cptToByte[c]; ok {
			out = append(out, b)
			continue
		}
		out = append(out, "[UNK_BYTE_0x"...)
		for _, x := range appendCpt(nil, c) {
			out = fmt.Appendf(out, "%02x", x)
		}
		out = append(out, text...)
		out = append(out, ']')
	}
	return out
}

// Piece is the text of one token as llama_token_to_piece(special=false)
// gives it: control and unknown tokens render empty, user-defined tokens as
// their text, SPM "▁" as a space, "<0xNN>" as that raw byte, GPT-2
// byte-level text as the bytes it stands for. A piece may be part of a
// UTF-8 sequence. The bytes are shared: do not modify them.
func (t *Tokenizer) Piece(id int32) []byte {
	if !t.valid(id) || t.attrs[id]&(attrUnknown|attrControl) != 0 {
		return nil
	}
	p := t.pieces[id]
	return p[:len(p):len(p)] // appends by the caller must copy
}

// Decode concatenates the pieces of ids (ids outside the vocabulary add
// nothing). It does not strip the SPM dummy-prefix space and does not apply
// llama_detokenize's clean_up_tokenization_spaces, so it equals what a
// stream of Piece calls shows; the result may end inside a UTF-8 sequence.
func (t *Tokenizer) Decode(ids []int32) string {
	var b strings.Builder
	for _, id := range ids {
		b.Write(t.Piece(id))
	}
	return b.String()
}

// StreamDecoder turns tokens into text one at a time without ever
// splitting a UTF-8 sequence: bytes of an incomplete character are held
// until the token that completes it arrives. Not safe for concurrent use.
type StreamDecoder struct {
	t       *Tokenizer
	pending []byte
}

// NewStreamDecoder starts an empty stream.
func (t *Tokenizer) NewStreamDecoder() *StreamDecoder {
	return &StreamDecoder{t: t}
}

// Add appends token id and returns the text that is now complete: valid
// UTF-8, with bytes that can never form a character replaced by U+FFFD.
func (d *StreamDecoder) Add(id int32) string {
	d.pending = append(d.pending, d.t.Piece(id)...)
	return d.drain(false)
}

// Flush returns whatever is held, each byte of an unfinished character as
// U+FFFD, and leaves the stream empty.
func (d *StreamDecoder) Flush() string {
	return d.drain(true)
}

func (d *StreamDecoder) drain(final bool) string {
	p := d.pending
	if len(p) == 0 {
		return ""
	}
	var b strings.Builder
	i := 0
	for i < len(p) {
		if !final && !utf8.FullRune(p[i:]) {
			break // a prefix of a valid sequence: wait for more bytes
		}
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n <= 1 {
			b.WriteRune(utf8.RuneError)
			i++
			continue
		}
		b.Write(p[i : i+n])
		i += n
	}
	d.pending = append(d.pending[:0], p[i:]...)
	return b.String()
}
