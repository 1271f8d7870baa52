package tokenizer

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/ggtest"
)

func vocab(t testing.TB, name string) *Tokenizer {
	t.Helper()
	return load(t, ggtest.Path(t, "vocab", "ggml-vocab-"+name+".gguf"))
}

func model(t testing.TB, name string) *Tokenizer {
	t.Helper()
	return load(t, ggtest.Path(t, "models", name+".gguf"))
}

func TestSpecialIDs(t *testing.T) {
	tests := []struct {
		vocab              string
		kind               Kind
		bos, eos, eot, unk int32
		addBOS, addEOS     bool
		eog, notEOG        []int32
		addSpacePrefix     bool
	}{
		{"llama-spm", SPM, 1, 2, NoToken, 0, true, false, []int32{2}, []int32{0, 1, 13}, true},
		// Phi-3: <|end|> (32007) ends a turn and is found by its text.
		{"phi-3", SPM, 1, 32000, 32007, 0, true, false, []int32{32000, 32007}, []int32{1, 2, 32001}, true},
		{"falcon", BPE, 11, 11, 11, NoToken, false, false, []int32{11}, []int32{0, 10}, false},
		{"deepseek-llm", BPE, 100000, 100001, 100001, NoToken, true, false, []int32{100001}, []int32{100000}, false},
		{"mpt", BPE, 0, 0, 0, 0, false, false, []int32{0}, []int32{1}, false},
		{"bert-bge", WPM, 101, NoToken, NoToken, 100, true, false, nil, []int32{101, 102}, false},
		{"baichuan", SPM, 1, 2, NoToken, 0, true, false, []int32{2}, []int32{1}, true},
	}
	for _, tc := range tests {
		t.Run(tc.vocab, func(t *testing.T) {
			tok := vocab(t, tc.vocab)
			if tok.Kind() != tc.kind {
				t.Errorf("Kind = %v, want %v", tok.Kind(), tc.kind)
			}
			got := []int32{tok.BOS(), tok.EOS(), tok.EOT(), tok.UNK()}
			if want := []int32{tc.bos, tc.eos, tc.eot, tc.unk}; !slices.Equal(got, want) {
				t.Errorf("BOS, EOS, EOT, UNK = %v, want %v", got, want)
			}
			if tok.AddBOS() != tc.addBOS || tok.AddEOS() != tc.addEOS || tok.AddSpacePrefix() != tc.addSpacePrefix {
				t.Errorf("AddBOS, AddEOS, AddSpacePrefix = %v, %v, %v, want %v, %v, %v",
					tok.AddBOS(), tok.AddEOS(), tok.AddSpacePrefix(), tc.addBOS, tc.addEOS, tc.addSpacePrefix)
			}
			for _, id := range tc.eog {
				if !tok.IsEOG(id) {
					t.Errorf("IsEOG(%d %q) = false", id, tok.TokenText(id))
				}
			}
			for _, id := range append(tc.notEOG, NoToken, int32(tok.VocabSize())) {
				if tok.IsEOG(id) {
					t.Errorf("IsEOG(%d %q) = true", id, tok.TokenText(id))
				}
			}
		})
	}
}

func TestEncodeSpecial(t *testing.T) {
	tests := []struct {
		name                     string
		vocab                    string
		text                     string
		addSpecial, parseSpecial bool
		want                     []int32
	}{
		// After a special token SPM text gets the dummy-prefix space again.
		{"spm bos parsed", "llama-spm", "<s>Hello", true, true, []int32{1, 1, 15043}},
		{"spm bos at end", "llama-spm", "Hello<s>", true, true, []int32{1, 15043, 1}},
		{"spm no special", "llama-spm", "Hello", false, false, []int32{15043}},
		{"spm empty", "llama-spm", "", false, false, []int32{}},
		{"spm empty with bos", "llama-spm", "", true, false, []int32{1}},
		// Phi-3's special tokens strip whitespace on their right.
		{"phi3 chat", "phi-3", "<|user|>\nHi<|end|>", false, true, []int32{32010, 6324, 32007}},
		// "</s>" is user-defined in Phi-3: matched even in user text.
		{"phi3 user-defined", "phi-3", "Hi</s> x", false, false, []int32{6324, 2, 921}},
		{"falcon eot parsed", "falcon", "Hi<|endoftext|>", true, true, []int32{5516, 11}},
		{"bert cls sep", "bert-bge", "Hello world", true, false, []int32{101, 7592, 2088, 102}},
		{"deepseek bos", "deepseek-llm", "Hello", true, false, []int32{100000, 17464}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok := vocab(t, tc.vocab)
			got, err := tok.Encode(tc.text, tc.addSpecial, tc.parseSpecial)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q, %v, %v) = %v, want %v", tc.text, tc.addSpecial, tc.parseSpecial, got, tc.want)
			}
		})
	}
}

// TestControlTextNotParsed: without parseSpecial, control-token text in user
// input is ordinary text and decodes back to itself.
func TestControlTextNotParsed(t *testing.T) {
	tests := []struct{ vocab, text string }{
		{"llama-spm", "<s>Hello</s>"},
		{"phi-3", "<|user|>\nHi<|end|>"},
		{"falcon", "Hi<|endoftext|>"},
		{"deepseek-llm", "<｜begin▁of▁sentence｜>x"},
	}
	for _, tc := range tests {
		t.Run(tc.vocab, func(t *testing.T) {
			tok := vocab(t, tc.vocab)
			ids, err := tok.Encode(tc.text, false, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				if tok.IsControl(id) {
					t.Errorf("Encode(%q) contains control token %d %q", tc.text, id, tok.TokenText(id))
				}
			}
			want := tc.text
			if tok.AddSpacePrefix() {
				want = " " + want
			}
			if got := tok.Decode(ids); got != want {
				t.Errorf("Decode(Encode(%q)) = %q, want %q", tc.text, got, want)
			}
		})
	}
}

func TestPiece(t *testing.T) {
	tests := []struct {
		name, vocab, token string
		want               string
	}{
		{"spm control", "llama-spm", "<s>", ""},
		{"spm unknown", "llama-spm", "<unk>", ""},
		{"spm word", "llama-spm", "▁Hello", " Hello"},
		{"spm byte", "llama-spm", "<0x41>", "A"},
		{"spm byte high", "llama-spm", "<0xE2>", "\xe2"},
		{"phi3 user-defined", "phi-3", "</s>", "</s>"},
		{"phi3 eot control", "phi-3", "<|end|>", ""},
		{"gpt2 space", "falcon", "Ġworld", " world"},
		{"gpt2 newline", "falcon", "Ċ", "\n"},
		{"gpt2 control", "falcon", "<|endoftext|>", ""},
		{"mpt whitespace", "mpt", "    ", "    "},
		{"bert word", "bert-bge", "▁hello", " hello"},
		{"bert control", "bert-bge", "[CLS]", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok := vocab(t, tc.vocab)
			id, ok := tok.TokenID(tc.token)
			if !ok {
				t.Fatalf("TokenID(%q) not found", tc.token)
			}
			if tok.TokenText(id) != tc.token {
				t.Errorf("TokenText(%d) = %q, want %q", id, tok.TokenText(id), tc.token)
			}
			if got := string(tok.Piece(id)); got != tc.want {
				t.Errorf("Piece(%d %q) = %q, want %q", id, tc.token, got, tc.want)
			}
		})
	}
	tok := vocab(t, "llama-spm")
	for _, id := range []int32{-1, int32(tok.VocabSize()), 1 << 30} {
		if p := tok.Piece(id); p != nil {
			t.Errorf("Piece(%d) = %q, want nil", id, p)
		}
		if s := tok.TokenText(id); s != "" {
			t.Errorf("TokenText(%d) = %q, want empty", id, s)
		}
	}
}

// TestStreamDecoder feeds stories260K's byte-fallback tokens one at a time:
// no chunk may split a character, and the chunks must add up to Decode.
func TestStreamDecoder(t *testing.T) {
	tok := model(t, "stories260K")
	tests := []struct {
		name, text string
		minHeld    int // Add calls that must return "" while bytes wait
	}{
		{"latin1", "Grüße", 2},
		{"emoji", "a 🦙!", 3},
		{"cjk", "我想在", 6},
		{"ascii", "hello world", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids, err := tok.Encode(tc.text, false, false)
			if err != nil {
				t.Fatal(err)
			}
			d := tok.NewStreamDecoder()
			var sb strings.Builder
			held := 0
			for _, id := range ids {
				chunk := d.Add(id)
				if !utf8.ValidString(chunk) {
					t.Fatalf("Add(%d) = %q: not valid UTF-8", id, chunk)
				}
				if chunk == "" && len(tok.Piece(id)) > 0 {
					held++
				}
				sb.WriteString(chunk)
			}
			sb.WriteString(d.Flush())
			if want := tok.Decode(ids); sb.String() != want {
				t.Errorf("streamed %q, Decode %q", sb.String(), want)
			}
			if want := " " + tc.text; sb.String() != want {
				t.Errorf("streamed %q, want %q", sb.String(), want)
			}
			if held < tc.minHeld {
				t.Errorf("%d Add calls held bytes back, want at least %d (ids %v)", held, tc.minHeld, ids)
			}
		})
	}

	t.Run("flush incomplete", func(t *testing.T) {
		d := tok.NewStreamDecoder()
		id, _ := tok.TokenID("<0xF0>")
		if got := d.Add(id); got != "" {
			t.Fatalf("Add(<0xF0>) = %q, want it held", got)
		}
		if got := d.Flush(); got != "\uFFFD" {
			t.Errorf("Flush = %q, want U+FFFD", got)
		}
		if got := d.Flush(); got != "" {
			t.Errorf("second Flush = %q, want empty", got)
		}
	})
	t.Run("invalid byte", func(t *testing.T) {
		d := tok.NewStreamDecoder()
		bad, _ := tok.TokenID("<0xFF>")
		a, _ := tok.TokenID("<0x41>")
		if got := d.Add(bad) + d.Add(a); got != "\uFFFDA" {
			t.Errorf("Add(<0xFF>) + Add(<0x41>) = %q, want %q", got, "\uFFFDA")
		}
	})
}

// metaBuilder makes small synthetic vocabularies.
func metaBuilder(t *testing.T, model string, tokens []string, types []int32) *gguf.Builder {
	t.Helper()
	b := gguf.NewBuilder()
	b.SetString(keyModel, model)
	b.SetStrings(keyTokens, tokens)
	if types != nil {
		b.SetInt32s(keyTokenType, types)
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSyntheticSPM(t *testing.T) {
	tokens := []string{"<unk>", "<s>", "</s>", "▁", "a", "aa", "b", "▁b"}
	types := []int32{typeUnknown, typeControl, typeControl, typeNormal, typeNormal, typeNormal, typeNormal, typeNormal}
	b := metaBuilder(t, "llama", tokens, types)
	b.SetFloat32s(keyScores, []float32{0, 0, 0, -5, -3, -1, -3, -2})
	tok, err := FromGGUF(b.Meta())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text string
		want       []int32
	}{
		// "aa" can start at the first or second a: equal scores go leftmost.
		{"tie goes left", "aaa", []int32{3, 5, 4}},
		// No <0xNN> tokens: an unknown character becomes <unk>.
		{"unknown", "ac", []int32{3, 4, 0}},
		{"higher score first", "b", []int32{7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tok.Encode(tc.text, false, false)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}

func TestSyntheticBPE(t *testing.T) {
	tokens := []string{"a", "b", "c", "ab", "bc", "abc"}
	tests := []struct {
		name   string
		merges []string
		want   []int32
	}{
		{"a b first", []string{"a b", "ab c"}, []int32{5}},
		{"b c first", []string{"b c", "a b", "ab c"}, []int32{0, 4}},
		{"no merges", []string{"x y"}, []int32{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := metaBuilder(t, "gpt2", tokens, nil)
			b.SetString(keyPre, "gpt-2")
			b.SetStrings(keyMerges, tc.merges)
			tok, err := FromGGUF(b.Meta())
			if err != nil {
				t.Fatal(err)
			}
			// gpt2's default BOS id 11 lies outside this vocabulary.
			if tok.BOS() != NoToken {
				t.Errorf("BOS = %d, want NoToken", tok.BOS())
			}
			got, err := tok.Encode("abc", true, false)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Encode(abc) = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSpecialIDFromFile: ids outside the vocabulary (0xFFFFFFFF is how
// converters write "none") leave llama.cpp's default in place.
func TestSpecialIDFromFile(t *testing.T) {
	tokens := []string{"<unk>", "<s>", "</s>", "x"}
	tests := []struct {
		name     string
		set      func(b *gguf.Builder)
		bos, eos int32
	}{
		{"defaults", func(*gguf.Builder) {}, 1, 2},
		{"set", func(b *gguf.Builder) {
			b.SetUint32("tokenizer.ggml.bos_token_id", 3)
			b.SetUint32("tokenizer.ggml.eos_token_id", 0)
		}, 3, 0},
		{"none keeps default", func(b *gguf.Builder) {
			b.SetUint32("tokenizer.ggml.bos_token_id", 0xFFFFFFFF)
			b.SetInt32("tokenizer.ggml.eos_token_id", -1)
		}, 1, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := metaBuilder(t, "llama", tokens, nil)
			tc.set(b)
			tok, err := FromGGUF(b.Meta())
			if err != nil {
				t.Fatal(err)
			}
			if tok.BOS() != tc.bos || tok.EOS() != tc.eos {
				t.Errorf("BOS, EOS = %d, %d, want %d, %d", tok.BOS(), tok.EOS(), tc.bos, tc.eos)
			}
		})
	}
}

func TestFromGGUFErrors(t *testing.T) {
	tests := []struct {
		name        string
		meta        func(t *testing.T) *gguf.Metadata
		unsupported bool
		mention     string
	}{
		{"t5", func(t *testing.T) *gguf.Metadata { return metaBuilder(t, "t5", []string{"a"}, nil).Meta() }, true, `"t5"`},
		{"rwkv", func(t *testing.T) *gguf.Metadata { return metaBuilder(t, "rwkv", []string{"a"}, nil).Meta() }, true, `"rwkv"`},
		{"plamo2", func(t *testing.T) *gguf.Metadata { return metaBuilder(t, "plamo2", []string{"a"}, nil).Meta() }, true, `"plamo2"`},
		{"unknown pre", func(t *testing.T) *gguf.Metadata {
			b := metaBuilder(t, "gpt2", []string{"a"}, nil)
			b.SetString(keyPre, "no-such-pre")
			b.SetStrings(keyMerges, nil)
			return b.Meta()
		}, true, `"no-such-pre"`},
		{"kimi-k2 pre", func(t *testing.T) *gguf.Metadata {
			b := metaBuilder(t, "gpt2", []string{"a"}, nil)
			b.SetString(keyPre, "kimi-k2")
			return b.Meta()
		}, true, `"kimi-k2"`},
		{"no model", func(t *testing.T) *gguf.Metadata {
			b := gguf.NewBuilder()
			b.SetStrings(keyTokens, []string{"a"})
			return b.Meta()
		}, false, keyModel},
		{"no tokens", func(t *testing.T) *gguf.Metadata {
			b := gguf.NewBuilder()
			b.SetString(keyModel, "llama")
			return b.Meta()
		}, false, keyTokens},
		{"duplicate token", func(t *testing.T) *gguf.Metadata {
			return metaBuilder(t, "llama", []string{"<unk>", "<s>", "</s>", "x", "x"}, nil).Meta()
		}, false, "ids 3 and 4"},
		{"bpe without merges", func(t *testing.T) *gguf.Metadata {
			return metaBuilder(t, "gpt2", []string{"a"}, nil).Meta()
		}, false, keyMerges},
		{"add_bos without bos", func(t *testing.T) *gguf.Metadata {
			b := metaBuilder(t, "gpt2", []string{"a"}, nil)
			b.SetStrings(keyMerges, nil)
			b.SetBool(keyAddBOS, true)
			return b.Meta()
		}, false, keyAddBOS},
		{"short scores", func(t *testing.T) *gguf.Metadata {
			b := metaBuilder(t, "llama", []string{"<unk>", "<s>", "</s>"}, nil)
			b.SetFloat32s(keyScores, []float32{0})
			return b.Meta()
		}, false, "1 entries for 3 tokens"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := FromGGUF(tc.meta(t))
			if err == nil {
				t.Fatalf("FromGGUF succeeded (%v), want an error", tok.Kind())
			}
			if errors.Is(err, ErrUnsupported) != tc.unsupported {
				t.Errorf("errors.Is(%v, ErrUnsupported) = %v, want %v", err, !tc.unsupported, tc.unsupported)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %q does not mention %s", err, tc.mention)
			}
		})
	}
}

// TestPreTokenizers compiles every configured pre-tokenizer and checks that
// its words tile each conformance text exactly.
func TestPreTokenizers(t *testing.T) {
	texts, _ := readVectors(t, ggtest.Path(t, "vocab", "ggml-vocab-llama-spm.gguf.inp"),
		ggtest.Path(t, "vocab", "ggml-vocab-llama-spm.gguf.out"))
	texts = append(texts, "\xff\xfe invalid \xe2\x96", strings.Repeat(" ", 3000)+"x", strings.Repeat("ab1", 2000))
	for _, c := range preConfigs {
		name := c.names[0]
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			p, err := newPreTokenizer(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, text := range texts {
				cpts := codepoints(text)
				spans, err := p.split(cpts)
				if err != nil {
					t.Fatalf("split(%q): %v", text, err)
				}
				at := 0
				for _, s := range spans {
					if s.start != at || s.end <= s.start {
						t.Fatalf("split(%q): word [%d,%d) after position %d", text, s.start, s.end, at)
					}
					at = s.end
				}
				if at != len(cpts) {
					t.Fatalf("split(%q) covers %d of %d codepoints", text, at, len(cpts))
				}
			}
		})
	}
}

func TestPreTokenizerWords(t *testing.T) {
	tests := []struct {
		pre, text string
		want      []string
	}{
		{"gpt-2", "Hello world's  3 x", []string{"Hello", " world", "'s", " ", " 3", " x"}},
		{"llama3", "Hello WORLD'S 12345\n\n x", []string{"Hello", " WORLD", "'S", " ", "123", "45", "\n\n", " x"}},
		{"qwen2", "ab 12", []string{"ab", " ", "1", "2"}},
		{"deepseek-coder", "ab 12\ncd", []string{"ab", " ", "1", "2", "\n", "cd"}},
		{"falcon", "a...b 1234", []string{"a", "...", "b", " ", "123", "4"}},
	}
	for _, tc := range tests {
		t.Run(tc.pre, func(t *testing.T) {
			c, err := preConfigFor(tc.pre)
			if err != nil {
				t.Fatal(err)
			}
			p, err := newPreTokenizer(c)
			if err != nil {
				t.Fatal(err)
			}
			cpts := codepoints(tc.text)
			spans, err := p.split(cpts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range spans {
				got = append(got, string(cpts[s.start:s.end]))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("split(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestCodepointFlags(t *testing.T) {
	tests := []struct {
		name string
		c    rune
		want cptFlags
	}{
		{"ascii letter", 'a', flagLetter},
		{"digit", '7', flagNumber},
		{"vulgar fraction", '½', flagNumber},
		{"space", ' ', flagSeparator | flagWhitespace},
		{"tab", '\t', flagControl | flagWhitespace},
		{"file separator is not whitespace", 0x1C, flagControl},
		{"no-break space", 0xA0, flagSeparator | flagWhitespace},
		{"zero width joiner", 0x200D, flagControl},
		{"combining acute", 0x301, flagMark},
		{"tilde", '~', flagSymbol},
		{"emoji", '🦙', flagSymbol},
		{"unassigned", 0x378, flagControl},
		{"beyond unicode", 0x110000, flagUndefined},
		{"khmer vowel sign", 0x17B6, flagMark},
		{"cjk", '我', flagLetter},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := flagsOf(tc.c); got != tc.want {
				t.Errorf("flagsOf(%U) = %#x, want %#x", tc.c, got, tc.want)
			}
		})
	}
}

func TestLaxUTF8(t *testing.T) {
	tests := []struct {
		name, in string
		want     []rune
	}{
		{"valid", "aé🦙", []rune{'a', 'é', '🦙'}},
		{"stray continuation", "\x80a", []rune{0xFFFD, 'a'}},
		{"truncated", "a\xe2\x96", []rune{'a', 0xFFFD, 0xFFFD}},
		// llama.cpp does not reject surrogates or overlong forms.
		{"surrogate", "\xed\xa0\x80", []rune{0xD800}},
		{"overlong", "\xc0\xaf", []rune{0x2F}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := codepoints(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("codepoints(%q) = %U, want %U", tc.in, got, tc.want)
			}
		})
	}
	if got := string(appendCpt(nil, 0xD800)); got != "\xed\xa0\x80" {
		t.Errorf("appendCpt(U+D800) = %q, want the 3-byte form", got)
	}
}

// TestConcurrentEncode: a Tokenizer is shared by goroutines (regex runners,
// lazily built Unicode tables).
func TestConcurrentEncode(t *testing.T) {
	for _, name := range []string{"falcon", "deepseek-llm", "bert-bge", "llama-spm"} {
		t.Run(name, func(t *testing.T) {
			tok := vocab(t, name)
			want, err := tok.Encode(benchText, true, false)
			if err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, 4)
			for range 4 {
				go func() {
					got, err := tok.Encode(benchText, true, false)
					if err == nil && !slices.Equal(got, want) {
						err = errors.New("concurrent Encode differs from sequential")
					}
					errs <- err
				}()
			}
			for range 4 {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
		})
	}
}
