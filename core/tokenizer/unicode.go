package tokenizer

import (
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Codepoint handling that mirrors llama.cpp's unicode.cpp. Its rules differ
// from Go's unicode/utf8 in ways that change token ids, so they are kept:
//   - decoding is lax (no overlong/surrogate checks) and turns each byte that
//     starts no decodable sequence into U+FFFD, consuming one byte;
//   - codepoint categories are one flag each (letter, number, …), with
//     unassigned codepoints counted as control (Python's \p{C} includes Cn,
//     and llama.cpp's tables were generated with it);
//   - whitespace is Unicode White_Space, not Go's unicode.IsSpace.

// cptFlags mirrors llama.cpp's unicode_cpt_flags bit layout.
type cptFlags uint16

const (
	flagUndefined cptFlags = 1 << iota
	flagNumber
	flagLetter
	flagSeparator
	flagMark
	flagPunct
	flagSymbol
	flagControl
	flagWhitespace

	flagCategories = flagUndefined | flagNumber | flagLetter | flagSeparator | flagMark | flagPunct | flagSymbol | flagControl
)

func (f cptFlags) isLetter() bool     { return f&flagLetter != 0 }
func (f cptFlags) isNumber() bool     { return f&flagNumber != 0 }
func (f cptFlags) isWhitespace() bool { return f&flagWhitespace != 0 }

// maxCodepoint bounds the flag table; llama.cpp answers "undefined" above it.
const maxCodepoint = 0x110000

const replacementChar = 0xFFFD

var (
	bmpFlagsOnce sync.Once
	bmpFlags     []cptFlags // flags for U+0000..U+FFFF, built on first use
)

// flagsOf returns the category and whitespace flags of a codepoint.
func flagsOf(cpt rune) cptFlags {
	if cpt >= 0 && cpt < 0x10000 {
		bmpFlagsOnce.Do(buildBMPFlags)
		return bmpFlags[cpt]
	}
	return computeFlags(cpt)
}

func buildBMPFlags() {
	t := make([]cptFlags, 0x10000)
	for c := range t {
		t[c] = computeFlags(rune(c))
	}
	bmpFlags = t
}

func computeFlags(cpt rune) cptFlags {
	if cpt < 0 || cpt >= maxCodepoint {
		return flagUndefined
	}
	var f cptFlags
	switch {
	case unicode.IsLetter(cpt):
		f = flagLetter
	case unicode.IsNumber(cpt):
		f = flagNumber
	case unicode.IsMark(cpt):
		f = flagMark
	case unicode.IsPunct(cpt):
		f = flagPunct
	case unicode.IsSymbol(cpt):
		f = flagSymbol
	case unicode.Is(unicode.Z, cpt):
		f = flagSeparator
	default:
		// Cc, Cf, Co, Cs and unassigned (Cn).
		f = flagControl
	}
	if isUnicodeWhitespace(cpt) {
		f |= flagWhitespace
	}
	return f
}

// isUnicodeWhitespace is the White_Space property (llama.cpp's
// unicode_set_whitespace): no U+001C..U+001F, unlike Go's unicode.IsSpace.
func isUnicodeWhitespace(c rune) bool {
	switch {
	case c >= 0x09 && c <= 0x0D, c == 0x20, c == 0x85, c == 0xA0, c == 0x1680,
		c >= 0x2000 && c <= 0x200A, c == 0x2028, c == 0x2029, c == 0x202F,
		c == 0x205F, c == 0x3000:
		return true
	}
	return false
}

// utf8SeqLen is llama.cpp's unicode_len_utf8: the sequence length announced
// by a lead byte (continuation and invalid bytes count as 1).
func utf8SeqLen(b byte) int {
	switch b >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}

// decodeCpt decodes one codepoint at s[i] the way unicode_cpt_from_utf8
// does: lead bits and continuation bytes are checked, nothing else. ok is
// false when the bytes do not form a sequence (the caller then takes U+FFFD
// for one byte).
func decodeCpt(s string, i int) (cpt rune, size int, ok bool) {
	b0 := s[i]
	cont := func(k int) bool { return i+k < len(s) && s[i+k]&0xC0 == 0x80 }
	switch {
	case b0&0x80 == 0:
		return rune(b0), 1, true
	case b0&0x40 == 0:
		return 0, 0, false
	case b0&0x20 == 0:
		if !cont(1) {
			return 0, 0, false
		}
		return rune(b0&0x1F)<<6 | rune(s[i+1]&0x3F), 2, true
	case b0&0x10 == 0:
		if !cont(1) || !cont(2) {
			return 0, 0, false
		}
		return rune(b0&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), 3, true
	case b0&0x08 == 0:
		if !cont(1) || !cont(2) || !cont(3) {
			return 0, 0, false
		}
		return rune(b0&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F), 4, true
	}
	return 0, 0, false
}

// codepoints is unicode_cpts_from_utf8: undecodable bytes become U+FFFD.
func codepoints(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		c, n, ok := decodeCpt(s, i)
		if !ok {
			out = append(out, replacementChar)
			i++
			continue
		}
		out = append(out, c)
		i += n
	}
	return out
}

// appendCpt encodes like unicode_cpt_to_utf8, which (unlike utf8.EncodeRune)
// writes surrogates as three bytes. Codepoints above U+10FFFF, which
// llama.cpp rejects with an exception, become U+FFFD here.
func appendCpt(b []byte, c rune) []byte {
	switch {
	case c >= 0 && c <= 0x7F:
		return append(b, byte(c))
	case c >= 0x80 && c <= 0x7FF:
		return append(b, 0xC0|byte(c>>6), 0x80|byte(c&0x3F))
	case c >= 0x800 && c <= 0xFFFF:
		return append(b, 0xE0|byte(c>>12), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
	case c >= 0x10000 && c <= 0x10FFFF:
		return append(b, 0xF0|byte(c>>18), 0x80|byte(c>>12&0x3F), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
	}
	return appendCpt(b, replacementChar)
}

// GPT-2 byte-level mapping: every byte is shown as a printable codepoint so
// that BPE merges work on text. Printable Latin-1 bytes stand for themselves;
// the rest take U+0100 onwards in byte order.
var (
	byteToCpt [256]rune
	cptToByte map[rune]byte
	// byteToUTF8 is byteToCpt pre-encoded, for building words quickly.
	byteToUTF8 [256]string
)

func init() {
	n := rune(0)
	cptToByte = make(map[rune]byte, 256)
	for b := 0; b < 256; b++ {
		keep := (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
		if keep {
			byteToCpt[b] = rune(b)
		} else {
			byteToCpt[b] = 256 + n
			n++
		}
		cptToByte[byteToCpt[b]] = byte(b)
		byteToUTF8[b] = string(appendCpt(nil, byteToCpt[b]))
	}
}

var (
	nfdFirstOnce sync.Once
	nfdFirst     map[rune]rune
)

// nfdBase maps a codepoint to the first codepoint of its NFD form, which is
// all llama.cpp's unicode_cpts_normalize_nfd keeps (its table was generated
// as ord(unicodedata.normalize('NFD', c)[0])).
func nfdBase(c rune) rune {
	nfdFirstOnce.Do(buildNFDFirst)
	if b, ok := nfdFirst[c]; ok {
		return b
	}
	return c
}

func buildNFDFirst() {
	m := make(map[rune]rune, 2100)
	var buf []byte
	// Canonical decompositions exist only below U+30000 (the last block is
	// CJK Compatibility Ideographs Supplement, U+2F800..U+2FA1F).
	for c := rune(0xC0); c < 0x30000; c++ {
		if c >= 0xD800 && c <= 0xDFFF {
			continue
		}
		buf = appendCpt(buf[:0], c)
		if norm.NFD.IsNormal(buf) {
			continue
		}
		d := norm.NFD.Bytes(buf)
		first, _, ok := decodeCpt(string(d), 0)
		if ok && first != c {
			m[c] = first
		}
	}
	nfdFirst = m
}
