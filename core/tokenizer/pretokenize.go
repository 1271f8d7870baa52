package tokenizer

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/dlclark/regexp2/v2"
)

// Pre-tokenizer regexes by tokenizer.ggml.pre, as llama.cpp lists them
// (llama-vocab.cpp, llm_tokenizer_bpe). Each regex of a list splits the
// pieces left by the previous one further; text between matches becomes a
// piece of its own.
//
// llama.cpp runs most of them through std::regex on a "collapsed" copy of
// the text in which every non-ASCII codepoint is replaced by one byte naming
// its category, \p{L} becoming [<letter byte>A-Za-z] and so on. Only the
// GPT-2 and Llama-3 patterns have hand-written matchers. The vectors test
// those exact behaviours (e.g. \p{Lu} and \p{Ll} both mean "any letter"
// there, and ASCII '~' is neither punctuation nor symbol), so this file
// reproduces the collapsing rather than using real Unicode classes.
const (
	reGPT2   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`
	reLlama3 = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// reLlama3I is the tokenizer.json spelling, also dispatched to the
	// Llama-3 matcher.
	reLlama3I = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

	reQwen2     = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reQwen35    = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reGPT4o     = `[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reTekken    = `[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reSeedCoder = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+`
	reBailing   = `'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+`
	rePoro      = " ?[^(\\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+"
	reDeepseek3 = `[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_` + "`" + `{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

	// DeepSeek LLM: letters of the cased-letter (LC) ranges, written with
	// escapes because several are canonical singletons (U+1FBE, U+2126,
	// U+212A, …) that editors silently normalize.
	reDeepseekLetters = `\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293}\x{295}-\x{2AF}` +
		`\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A}\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}` +
		`\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}` +
		`\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45}` +
		`\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}` +
		`\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}` +
		`\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}` +
		`\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}` +
		`\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}` +
		`\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3}` +
		`\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+`
	reDeepseekPunct = `\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+`
	reDeepseekCJK   = `[\x{4E00}-\x{9FA5}\x{0800}-\x{4E00}\x{AC00}-\x{D7FF}]+`
	reDeepseek3CJK  = `[\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+`
)

// preConfig is what tokenizer.ggml.pre selects.
type preConfig struct {
	names        []string // tokenizer.ggml.pre values ("" is an absent key)
	regexes      []string
	ignoreMerges bool
	addBOS       bool // BOS added by default (add_bos_token absent)
	noBOS        bool // the vocabulary has no BOS
}

// preConfigs is llama.cpp's pre-tokenizer table, minus the types that need
// matchers it hand-writes beyond GPT-2/Llama-3 (kimi-k2, afmoe), raw-UTF-8
// BPE (gemma4, sarvam-moe, whitespace), or empty-match and \b semantics
// (superbpe, tiny_aya).
var preConfigs = []preConfig{
	{names: []string{"", "default"},
		regexes: []string{`[\p{P}\$\+<=>\^~\|]+`, reGPT2, `\p{N}+`, `[0-9][0-9][0-9]`}},
	{names: []string{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"},
		regexes: []string{reLlama3}, ignoreMerges: true, addBOS: true},
	{names: []string{"dbrx", "smaug-bpe"}, regexes: []string{reLlama3}},
	{names: []string{"glm4", "chatglm-bpe"}, regexes: []string{reLlama3}, noBOS: true},
	{names: []string{"deepseek-llm"},
		regexes: []string{`[\r\n]`, reDeepseekLetters, reDeepseekPunct, `\s+$`, reDeepseekCJK, `\p{N}+`}},
	{names: []string{"deepseek-coder"},
		regexes: []string{`[\r\n]`, `\s?\p{L}+`, `\s?\p{P}+`, reDeepseekCJK, `\p{N}`}},
	{names: []string{"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"},
		regexes: []string{`\p{N}{1,3}`, reDeepseek3CJK, reDeepseek3}},
	{names: []string{"falcon"},
		regexes: []string{"[\\p{P}\\$\\+<=>\\^~\\|`]+", reGPT2, `[0-9][0-9][0-9]`}},
	{names: []string{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"},
		regexes: []string{`\p{N}`, reGPT2}},
	{names: []string{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
		"modern-bert", "exaone4", "jina-v1-en", "jina-v2-code", "roberta-bpe", "mpt", "olmo", "jais", "trillion",
		"granite-docling"},
		regexes: []string{reGPT2}},
	{names: []string{"stablelm2", "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "hunyuan", "solar-open", "grok-2"},
		regexes: []string{reQwen2}},
	{names: []string{"qwen35"}, regexes: []string{reQwen35}},
	{names: []string{"poro-chat", "bloom", "gpt3-finnish"}, regexes: []string{rePoro}},
	{names: []string{"viking"}, regexes: []string{rePoro, `\p{N}`}},
	{names: []string{"tekken"}, regexes: []string{reTekken}, ignoreMerges: true, addBOS: true},
	{names: []string{"chameleon"}, addBOS: true,
		regexes: []string{`<sentinel:[0-9]+>`, `(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z`, `([\t\n]|    |  )`, `\p{N}`,
			"[\\p{P}!-/:-@\\[-`{-~]", reGPT2}},
	{names: []string{"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"}, regexes: []string{reGPT4o}},
	{names: []string{"seed-coder"}, regexes: []string{reSeedCoder}},
	{names: []string{"bailingmoe", "bailingmoe2", "llada-moe"}, regexes: []string{reBailing}},
}

func preConfigFor(pre string) (preConfig, error) {
	for _, c := range preConfigs {
		for _, n := range c.names {
			if n == pre {
				return c, nil
			}
		}
	}
	return preConfig{}, fmt.Errorf("%w: BPE pre-tokenizer %q (%s)", ErrUnsupported, pre, keyPre)
}

// splitKind selects how one regex of the list is applied.
type splitKind int

const (
	splitRegex     splitKind = iota // regexp2 over the raw codepoints
	splitCollapsed                  // regexp2 over the collapsed codepoints
	splitGPT2                       // hand-written GPT-2 matcher
	splitLlama3                     // hand-written Llama-3 matcher
)

type splitStep struct {
	kind splitKind
	re   *regexp2.Regexp
}

// preTokenizer holds the compiled steps of one configuration.
type preTokenizer struct {
	steps []splitStep
}

func newPreTokenizer(c preConfig) (*preTokenizer, error) {
	p := &preTokenizer{}
	for _, expr := range c.regexes {
		switch expr {
		case reGPT2:
			p.steps = append(p.steps, splitStep{kind: splitGPT2})
			continue
		case reLlama3, reLlama3I:
			p.steps = append(p.steps, splitStep{kind: splitLlama3})
			continue
		}
		collapsed := usesCategories(expr)
		translated, err := translateRegex(expr, collapsed)
		if err != nil {
			return nil, err
		}
		re, err := regexp2.Compile(translated, regexp2.None, regexp2.OptionMaxBacktrackingStackSize(-1))
		if err != nil {
			return nil, fmt.Errorf("regex %q (as %q): %w", expr, translated, err)
		}
		kind := splitRegex
		if collapsed {
			kind = splitCollapsed
		}
		p.steps = append(p.steps, splitStep{kind: kind, re: re})
	}
	return p, nil
}

// Category stand-ins in the collapsed text (llama.cpp's k_ucat_cpt).
const (
	collapsedOther      = 0xD0
	collapsedNumber     = 0xD1
	collapsedLetter     = 0xD2
	collapsedPunct      = 0xD3
	collapsedMark       = 0xD4
	collapsedSymbol     = 0xD5
	collapsedWhitespace = 0x0B // vertical tab: something \s matches
)

// categoryClass is the bracket content a \p{…} becomes in collapsed form:
// the stand-in plus the ASCII members (llama.cpp's k_ucat_map).
var categoryClass = map[string]string{
	"N":  `\x{D1}0-9`,
	"L":  `\x{D2}A-Za-z`,
	"Lu": `\x{D2}A-Za-z`,
	"Ll": `\x{D2}A-Za-z`,
	"Lt": `\x{D2}A-Za-z`,
	"Lm": `\x{D2}A-Za-z`,
	"Lo": `\x{D2}A-Za-z`,
	"P":  `\x{D3}!-#%-*,-/:-;?-@\[-\]_\{\}`,
	"M":  `\x{D4}`,
	"S":  `\x{D5}\$\+<->\^` + "`" + `\|`,
}

func usesCategories(expr string) bool {
	for name := range categoryClass {
		if strings.Contains(expr, `\p{`+name+`}`) {
			return true
		}
	}
	return false
}

// ECMAScript's \s in the "C" locale, the only whitespace left after
// non-ASCII whitespace is replaced by a vertical tab.
const cSpaceClass = `\t\n\x0B\f\r\x20`

// translateRegex rewrites an ECMAScript (std::regex) pattern for regexp2 so
// that it means what it meant to llama.cpp: \s, \d, \w are ASCII, $ is the
// end of the piece, '.' stops at line terminators, and with collapsed set
// every \p{…} becomes its collapsed class.
func translateRegex(expr string, collapsed bool) (string, error) {
	var b strings.Builder
	rs := []rune(expr)
	inClass := false
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\\' && i+1 < len(rs):
			i++
			e := rs[i]
			switch e {
			case 'p':
				end := -1
				if i+1 < len(rs) && rs[i+1] == '{' {
					for k := i + 2; k < len(rs); k++ {
						if rs[k] == '}' {
							end = k
							break
						}
					}
				}
				if end < 0 {
					return "", fmt.Errorf("regex %q: malformed \\p at %d", expr, i-1)
				}
				name := string(rs[i+2 : end])
				cls, ok := categoryClass[name]
				if !ok || !collapsed {
					return "", fmt.Errorf("regex %q: unicode class \\p{%s} is not supported by llama.cpp's std::regex path", expr, name)
				}
				if inClass {
					b.WriteString(cls)
				} else {
					b.WriteString("[" + cls + "]")
				}
				i = end
			case 's':
				if inClass {
					b.WriteString(cSpaceClass)
				} else {
					b.WriteString("[" + cSpaceClass + "]")
				}
			case 'S':
				if inClass {
					return "", fmt.Errorf("regex %q: \\S inside a class is not supported", expr)
				}
				b.WriteString("[^" + cSpaceClass + "]")
			case 'd':
				if inClass {
					b.WriteString("0-9")
				} else {
					b.WriteString("[0-9]")
				}
			case 'D':
				if inClass {
					return "", fmt.Errorf("regex %q: \\D inside a class is not supported", expr)
				}
				b.WriteString("[^0-9]")
			case 'w':
				if inClass {
					b.WriteString("A-Za-z0-9_")
				} else {
					b.WriteString("[A-Za-z0-9_]")
				}
			case 'W':
				if inClass {
					return "", fmt.Errorf("regex %q: \\W inside a class is not supported", expr)
				}
				b.WriteString("[^A-Za-z0-9_]")
			case 'b', 'B':
				return "", fmt.Errorf("regex %q: word boundaries are not supported", expr)
			default:
				b.WriteRune('\\')
				b.WriteRune(e)
			}
		case c == '[' && !inClass:
			inClass = true
			b.WriteRune('[')
			if i+1 < len(rs) && rs[i+1] == '^' {
				i++
				b.WriteRune('^')
			}
		case c == '[' && inClass:
			// A literal '[' in ECMAScript; .NET would read "-[" as class
			// subtraction.
			b.WriteString(`\[`)
		case c == ']' && inClass:
			inClass = false
			b.WriteRune(']')
		case c == '$' && !inClass:
			b.WriteString(`\z`)
		case c == '^' && !inClass:
			b.WriteString(`\A`)
		case c == '.' && !inClass:
			b.WriteString(`[^\n\r\x{2028}\x{2029}]`)
		default:
			b.WriteRune(c)
		}
	}
	if inClass {
		return "", fmt.Errorf("regex %q: unterminated character class", expr)
	}
	return b.String(), nil
}

// span is a piece [start, end) of the codepoint array.
type span struct{ start, end int }

// split cuts cpts into pre-tokenizer words.
func (p *preTokenizer) split(cpts []rune) ([]span, error) {
	if len(cpts) == 0 {
		return nil, nil
	}
	spans := []span{{0, len(cpts)}}
	var collapsedView, rawView []rune
	var next []span
	for _, st := range p.steps {
		next = next[:0]
		switch st.kind {
		case splitGPT2:
			for _, s := range spans {
				next = splitGPT2Words(cpts, s, next)
			}
		case splitLlama3:
			for _, s := range spans {
				next = splitLlama3Words(cpts, s, next)
			}
		default:
			var view []rune
			if st.kind == splitCollapsed {
				if collapsedView == nil {
					collapsedView = collapse(cpts)
				}
				view = collapsedView
			} else {
				if rawView == nil {
					rawView = whitespaceView(cpts)
				}
				view = rawView
			}
			for _, s := range spans {
				var err error
				if next, err = regexSplit(st.re, view, s, next); err != nil {
					return nil, err
				}
			}
		}
		spans, next = next, spans
	}
	return spans, nil
}

// collapse maps each codepoint to one rune: ASCII as is, whitespace to a
// vertical tab, anything else to its category stand-in.
func collapse(cpts []rune) []rune {
	out := make([]rune, len(cpts))
	for i, c := range cpts {
		if c >= 0 && c < 128 {
			out[i] = c
			continue
		}
		f := flagsOf(c)
		switch {
		case f.isWhitespace():
			out[i] = collapsedWhitespace
		case f&flagCategories == flagNumber:
			out[i] = collapsedNumber
		case f&flagCategories == flagLetter:
			out[i] = collapsedLetter
		case f&flagCategories == flagPunct:
			out[i] = collapsedPunct
		case f&flagCategories == flagMark:
			out[i] = collapsedMark
		case f&flagCategories == flagSymbol:
			out[i] = collapsedSymbol
		default:
			out[i] = collapsedOther
		}
	}
	return out
}

// whitespaceView is the text std::wregex sees in llama.cpp: non-ASCII
// whitespace becomes a vertical tab so that the ASCII \s matches it.
func whitespaceView(cpts []rune) []rune {
	out := make([]rune, len(cpts))
	for i, c := range cpts {
		if c > 0x7F && flagsOf(c).isWhitespace() {
			c = collapsedWhitespace
		}
		out[i] = c
	}
	return out
}

// regexSplit emits the matches of re in view[s] and the gaps between them.
func regexSplit(re *regexp2.Regexp, view []rune, s span, out []span) ([]span, error) {
	seg := view[s.start:s.end]
	m, err := re.FindRunesMatch(seg)
	prev := 0
	for err == nil && m != nil {
		a, n := m.RuneIndex, m.RuneLength
		if a > prev {
			out = append(out, span{s.start + prev, s.start + a})
		}
		if n > 0 {
			out = append(out, span{s.start + a, s.start + a + n})
		}
		prev = a + n
		m, err = re.FindNextMatch(m)
	}
	if err != nil {
		return out, fmt.Errorf("tokenizer: pre-tokenizer regex %q: %w", re.String(), err)
	}
	if prev < len(seg) {
		out = append(out, span{s.start + prev, s.end})
	}
	return out, nil
}

// outOfRange is what the hand-written matchers read past a piece's end.
const outOfRange = -1

// wordCursor gives the hand-written matchers llama.cpp's view of a piece:
// codepoints and flags inside it, outOfRange and empty flags outside.
type wordCursor struct {
	cpts       []rune
	start, end int
	prevEnd    int
	out        []span
}

func (w *wordCursor) cpt(pos int) rune {
	if pos >= w.start && pos < w.end {
		return w.cpts[pos]
	}
	return outOfRange
}

func (w *wordCursor) flags(pos int) cptFlags {
	if pos >= w.start && pos < w.end {
		return flagsOf(w.cpts[pos])
	}
	return 0
}

// cut ends a word at end and returns its length.
func (w *wordCursor) cut(end int) int {
	n := end - w.prevEnd
	if n > 0 {
		w.out = append(w.out, span{w.prevEnd, end})
	}
	w.prevEnd = end
	return n
}

// otherClass is [^\s\p{L}\p{N}] for a codepoint inside the piece.
func otherClass(f cptFlags) bool {
	return f&(flagWhitespace|flagLetter|flagNumber) == 0 && f != 0
}

// whitespaceRun handles \s*[\r\n]+ (when withNewlines), \s+(?!\S) and \s+
// at pos; it returns the new position and whether it matched.
func (w *wordCursor) whitespaceRun(pos int, withNewlines bool) (int, bool) {
	n, lastNL := 0, -1
	for w.flags(pos + n).isWhitespace() {
		if c := w.cpt(pos + n); c == '\r' || c == '\n' {
			lastNL = pos + n + 1
		}
		n++
	}
	if withNewlines && lastNL >= 0 {
		w.cut(lastNL)
		return lastNL, true
	}
	if n > 1 && w.cpt(pos+n) != outOfRange {
		// \s+(?!\S): leave the last space to prefix the next word.
		pos += n - 1
		w.cut(pos)
		return pos, true
	}
	if n > 0 {
		pos += n
		w.cut(pos)
		return pos, true
	}
	return pos, false
}

// splitGPT2Words is llama.cpp's unicode_regex_split_custom_gpt2:
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func splitGPT2Words(cpts []rune, s span, out []span) []span {
	w := wordCursor{cpts: cpts, start: s.start, end: s.end, prevEnd: s.start, out: out}
	for pos := s.start; pos < s.end; {
		c := w.cpt(pos)
		f := w.flags(pos)
		if c == '\'' && pos+1 < s.end {
			n1 := w.cpt(pos + 1)
			if n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd' {
				pos += w.cut(pos + 2)
				continue
			}
			if pos+2 < s.end {
				n2 := w.cpt(pos + 2)
				if (n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l') {
					pos += w.cut(pos + 3)
					continue
				}
			}
		}
		f2 := f
		if c == ' ' {
			f2 = w.flags(pos + 1)
		}
		switch {
		case f2.isLetter():
			if c == ' ' {
				pos++
			}
			for w.flags(pos).isLetter() {
				pos++
			}
			w.cut(pos)
			continue
		case f2.isNumber():
			if c == ' ' {
				pos++
			}
			for w.flags(pos).isNumber() {
				pos++
			}
			w.cut(pos)
			continue
		case otherClass(f2):
			if c == ' ' {
				pos++
			}
			for otherClass(w.flags(pos)) {
				pos++
			}
			w.cut(pos)
			continue
		}
		if p, ok := w.whitespaceRun(pos, false); ok {
			pos = p
			continue
		}
		pos++
		w.cut(pos)
	}
	return w.out
}

// splitLlama3Words is llama.cpp's unicode_regex_split_custom_llama3:
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitLlama3Words(cpts []rune, s span, out []span) []span {
	w := wordCursor{cpts: cpts, start: s.start, end: s.end, prevEnd: s.start, out: out}
	for pos := s.start; pos < s.end; {
		c := w.cpt(pos)
		f := w.flags(pos)
		if c == '\'' && pos+1 < s.end {
			n1 := unicode.ToLower(w.cpt(pos + 1))
			if n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd' {
				pos += w.cut(pos + 2)
				continue
			}
			if pos+2 < s.end {
				n2 := unicode.ToLower(w.cpt(pos + 2))
				if (n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l') {
					pos += w.cut(pos + 3)
					continue
				}
			}
		}
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if !(c == '\r' || c == '\n' || f.isNumber()) {
			if f.isLetter() || w.flags(pos+1).isLetter() {
				pos++
				for w.flags(pos).isLetter() {
					pos++
				}
				w.cut(pos)
				continue
			}
		}
		// \p{N}{1,3}
		if f.isNumber() {
			first := pos
			for w.flags(pos).isNumber() {
				pos++
				if pos-first >= 3 {
					w.cut(pos)
					first = pos
				}
			}
			w.cut(pos)
			continue
		}
		// ?[^\s\p{L}\p{N}]+[\r\n]* (llama.cpp tests the current flags, not
		// the next, for being inside the piece; both always are here)
		f2 := f
		if c == ' ' {
			f2 = w.flags(pos + 1)
		}
		if f2&(flagWhitespace|flagLetter|flagNumber) == 0 && f != 0 {
			if c == ' ' {
				pos++
			}
			for otherClass(w.flags(pos)) {
				pos++
			}
			for c2 := w.cpt(pos); c2 == '\r' || c2 == '\n'; c2 = w.cpt(pos) {
				pos++
			}
			w.cut(pos)
			continue
		}
		if p, ok := w.whitespaceRun(pos, true); ok {
			pos = p
			continue
		}
		pos++
		w.cut(pos)
	}
	return w.out
}
