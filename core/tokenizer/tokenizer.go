// Package tokenizer turns text into token ids and back the way llama.cpp's
// llama-vocab.cpp does, from the tokenizer.ggml.* keys of a GGUF file.
//
// Supported tokenizer.ggml.model values: "llama" (SentencePiece BPE with
// byte fallback), "gpt2" (byte-level BPE with the pre-tokenizer named by
// tokenizer.ggml.pre) and "bert" (WordPiece). Others ("t5", "rwkv", …) give
// an error wrapping ErrUnsupported.
//
// A Tokenizer is immutable after FromGGUF and safe for concurrent use.
package tokenizer

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/minfer/minfer/gguf"
)

// ErrUnsupported is wrapped by FromGGUF's error for a tokenizer model or
// pre-tokenizer this package does not implement.
var ErrUnsupported = errors.New("tokenizer: unsupported")

// NoToken is the id reported for an absent special token (llama.cpp's
// LLAMA_TOKEN_NULL).
const NoToken int32 = -1

// Kind is the tokenization algorithm.
type Kind int

const (
	// SPM is SentencePiece BPE (tokenizer.ggml.model "llama").
	SPM Kind = iota + 1
	// BPE is byte-level BPE (tokenizer.ggml.model "gpt2").
	BPE
	// WPM is WordPiece (tokenizer.ggml.model "bert").
	WPM
)

func (k Kind) String() string {
	switch k {
	case SPM:
		return "SPM"
	case BPE:
		return "BPE"
	case WPM:
		return "WPM"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// tokenAttr is llama.cpp's llama_token_attr bit set.
type tokenAttr uint16

const (
	attrUnknown tokenAttr = 1 << iota
	attrUnused
	attrNormal
	attrControl
	attrUserDefined
	attrByte
	attrNormalized
	attrLStrip
	attrRStrip
	attrSingleWord
)

// GGUF tokenizer.ggml.token_type values.
const (
	typeNormal      = 1
	typeUnknown     = 2
	typeControl     = 3
	typeUserDefined = 4
	typeUnused      = 5
	typeByte        = 6
)

// Tokenizer encodes and decodes text for one vocabulary.
type Tokenizer struct {
	kind  Kind
	model string // tokenizer.ggml.model
	pre   string // tokenizer.ggml.pre ("" when absent)

	texts       []string
	scores      []float32
	attrs       []tokenAttr
	ids         map[string]int32
	pieces      [][]byte // token_to_piece with special=true, per id
	maxTokenLen int

	bos, eos, eot, eom, unk, sep, pad, mask int32
	fimPre, fimSuf, fimMid, fimPad, fimRep  int32
	fimSep                                  int32

	addBOS, addEOS, addSpacePrefix bool
	// ignoreMerges: a pre-tokenized word that is itself a token is emitted
	// whole (llama3-style vocabularies).
	ignoreMerges bool

	eog []bool

	// specials lists control, user-defined and unknown tokens, longest text
	// first: the order llama.cpp matches them in raw text.
	specials []int32
	// specialsByByte indexes specials by the first byte of their text.
	specialsByByte [256][]int32

	merges map[string]int32 // "left right" → rank (BPE)
	split  *preTokenizer    // BPE

	wpmLowercase, wpmStripAccents bool
}

// Metadata keys.
const (
	keyModel       = "tokenizer.ggml.model"
	keyPre         = "tokenizer.ggml.pre"
	keyTokens      = "tokenizer.ggml.tokens"
	keyScores      = "tokenizer.ggml.scores"
	keyTokenType   = "tokenizer.ggml.token_type"
	keyMerges      = "tokenizer.ggml.merges"
	keyAddBOS      = "tokenizer.ggml.add_bos_token"
	keyAddEOS      = "tokenizer.ggml.add_eos_token"
	keyAddPrefix   = "tokenizer.ggml.add_space_prefix"
	keyLowercase   = "tokenizer.ggml.normalizer.lowercase"
	keyStripAccent = "tokenizer.ggml.normalizer.strip_accents"
	keyGeneralName = "general.name"
	keyGeneralArch = "general.architecture"
)

// FromGGUF builds a Tokenizer from a file's tokenizer.ggml.* metadata,
// applying llama.cpp's defaults for absent keys. The Tokenizer keeps no
// reference to the file's mapping, so the file may be closed afterwards.
//
// Special ids follow llama.cpp: an id outside the vocabulary (converters
// write 0xFFFFFFFF or -1 for "none") leaves the model type's default in
// place (SPM: BOS 1, EOS 2, UNK 0; BPE: BOS = EOS = 11; BERT: [CLS] 101,
// [SEP] 102, [UNK] 100), and a default outside the vocabulary means none.
func FromGGUF(m *gguf.Metadata) (*Tokenizer, error) {
	if m == nil {
		return nil, errors.New("tokenizer: no metadata")
	}
	model, err := m.String(keyModel)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	pre, err := optString(m, keyPre)
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{model: model, pre: pre}

	// Per-model defaults, as llama_vocab::impl::load sets them.
	switch model {
	case "llama":
		t.kind = SPM
		t.bos, t.eos, t.unk = 1, 2, 0
		t.sep, t.pad, t.mask = NoToken, NoToken, NoToken
		t.addSpacePrefix, t.addBOS = true, true
	case "gpt2":
		t.kind = BPE
		t.bos, t.eos, t.unk = 11, 11, NoToken
		t.sep, t.pad, t.mask = NoToken, NoToken, NoToken
	case "bert":
		t.kind = WPM
		t.bos, t.eos, t.unk = 101, NoToken, 100
		t.sep, t.pad, t.mask = 102, 0, 103
		t.addBOS = true
	case "":
		return nil, fmt.Errorf("tokenizer: %s is empty", keyModel)
	default:
		return nil, fmt.Errorf("%w: tokenizer model %q (%s); supported: llama (SPM), gpt2 (BPE), bert (WPM)", ErrUnsupported, model, keyModel)
	}
	t.eot, t.eom = NoToken, NoToken
	t.fimPre, t.fimSuf, t.fimMid, t.fimPad, t.fimRep, t.fimSep = NoToken, NoToken, NoToken, NoToken, NoToken, NoToken

	if t.kind == BPE {
		cfg, err := preConfigFor(pre)
		if err != nil {
			return nil, err
		}
		t.ignoreMerges = cfg.ignoreMerges
		if cfg.addBOS {
			t.addBOS = true
		}
		if cfg.noBOS {
			t.bos = NoToken
		}
		if t.split, err = newPreTokenizer(cfg); err != nil {
			return nil, fmt.Errorf("tokenizer: pre-tokenizer %q: %w", pre, err)
		}
	}
	if v, ok, err := optBool(m, keyAddPrefix); err != nil {
		return nil, err
	} else if ok {
		t.addSpacePrefix = v
	}

	if err := t.loadVocab(m); err != nil {
		return nil, err
	}
	if t.kind == BPE {
		if err := t.loadMerges(m); err != nil {
			return nil, err
		}
	}
	if err := t.loadSpecialIDs(m); err != nil {
		return nil, err
	}
	if t.kind == WPM {
		t.wpmLowercase = true
		if v, ok, err := optBool(m, keyLowercase); err != nil {
			return nil, err
		} else if ok {
			t.wpmLowercase = v
		}
		t.wpmStripAccents = t.wpmLowercase
		if v, ok, err := optBool(m, keyStripAccent); err != nil {
			return nil, err
		} else if ok {
			t.wpmStripAccents = v
		}
	}
	t.detectByText()
	t.buildSpecials()
	t.buildPieces()
	if err := t.applyNameAttrs(m); err != nil {
		return nil, err
	}
	return t, nil
}

func optString(m *gguf.Metadata, key string) (string, error) {
	s, err := m.String(key)
	if errors.Is(err, gguf.ErrKeyNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("tokenizer: %w", err)
	}
	return s, nil
}

func optBool(m *gguf.Metadata, key string) (v, present bool, err error) {
	v, err = m.Bool(key)
	if errors.Is(err, gguf.ErrKeyNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("tokenizer: %w", err)
	}
	return v, true, nil
}

func (t *Tokenizer) loadVocab(m *gguf.Metadata) error {
	texts, err := m.Strings(keyTokens)
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	n := len(texts)
	if n == 0 {
		return fmt.Errorf("tokenizer: %s is empty", keyTokens)
	}
	if int64(n) > 1<<31-1 {
		return fmt.Errorf("tokenizer: %s has %d entries, more than int32 ids can address", keyTokens, n)
	}
	scores := make([]float32, n)
	if m.Has(keyScores) {
		if fs, err := m.Float32s(keyScores); err == nil {
			if len(fs) != n {
				return fmt.Errorf("tokenizer: %s has %d entries for %d tokens", keyScores, len(fs), n)
			}
			copy(scores, fs)
		} else if is, ierr := m.Int32s(keyScores); ierr == nil {
			if len(is) != n {
				return fmt.Errorf("tokenizer: %s has %d entries for %d tokens", keyScores, len(is), n)
			}
			for i := range scores {
				scores[i] = float32(is[i])
			}
		} else {
			return fmt.Errorf("tokenizer: %w", err)
		}
	}
	var types []int32
	if m.Has(keyTokenType) {
		if types, err = m.Int32s(keyTokenType); err != nil {
			return fmt.Errorf("tokenizer: %w", err)
		}
		if len(types) != n {
			return fmt.Errorf("tokenizer: %s has %d entries for %d tokens", keyTokenType, len(types), n)
		}
	}

	t.texts = make([]string, n)
	t.scores = scores
	t.attrs = make([]tokenAttr, n)
	t.ids = make(map[string]int32, n)
	for i, s := range texts {
		if s == "" {
			s = fmt.Sprintf("[EMPTY_%d]", i)
		}
		if prev, dup := t.ids[s]; dup {
			return fmt.Errorf("tokenizer: duplicate token %q in vocabulary: ids %d and %d", s, prev, i)
		}
		t.ids[s] = int32(i)
		t.texts[i] = s
		if len(s) > t.maxTokenLen {
			t.maxTokenLen = len(s)
		}
		a := attrNormal
		if types != nil {
			switch types[i] {
			case typeNormal:
				a = attrNormal
			case typeUnknown:
				a = attrUnknown
			case typeControl:
				a = attrControl
			case typeUserDefined:
				a = attrUserDefined
			case typeUnused:
				a = attrUnused
			case typeByte:
				a = attrByte
			default:
				a = 0 // undefined
			}
		}
		t.attrs[i] = a
	}
	return nil
}

func (t *Tokenizer) loadMerges(m *gguf.Metadata) error {
	merges, err := m.Strings(keyMerges)
	if err != nil {
		return fmt.Errorf("tokenizer: BPE vocabulary needs merges: %w", err)
	}
	t.merges = make(map[string]int32, len(merges))
	for rank, w := range merges {
		// llama.cpp splits at the first space after position 0; a pair is
		// looked up as "left right" with neither side holding a space, which
		// reproduces exactly the entries that split that way.
		sp := strings.IndexByte(w[min(1, len(w)):], ' ')
		if sp < 0 {
			continue
		}
		if _, dup := t.merges[w]; !dup {
			t.merges[w] = int32(rank)
		}
	}
	return nil
}

// loadSpecialIDs reads the special token ids over the defaults. As in
// llama.cpp, an id outside the vocabulary (including 0xFFFFFFFF and -1)
// leaves the default in place, and a default outside it becomes NoToken.
func (t *Tokenizer) loadSpecialIDs(m *gguf.Metadata) error {
	n := int64(len(t.texts))
	slots := []struct {
		key string
		id  *int32
	}{
		{"tokenizer.ggml.bos_token_id", &t.bos},
		{"tokenizer.ggml.eos_token_id", &t.eos},
		{"tokenizer.ggml.eot_token_id", &t.eot},
		{"tokenizer.ggml.eom_token_id", &t.eom},
		{"tokenizer.ggml.unknown_token_id", &t.unk},
		{"tokenizer.ggml.seperator_token_id", &t.sep},
		{"tokenizer.ggml.padding_token_id", &t.pad},
		{"tokenizer.ggml.mask_token_id", &t.mask},
		{"tokenizer.ggml.fim_pre_token_id", &t.fimPre},
		{"tokenizer.ggml.fim_suf_token_id", &t.fimSuf},
		{"tokenizer.ggml.fim_mid_token_id", &t.fimMid},
		{"tokenizer.ggml.fim_pad_token_id", &t.fimPad},
		{"tokenizer.ggml.fim_rep_token_id", &t.fimRep},
		{"tokenizer.ggml.fim_sep_token_id", &t.fimSep},
		// deprecated spellings, read after the new ones as llama.cpp does
		{"tokenizer.ggml.prefix_token_id", &t.fimPre},
		{"tokenizer.ggml.suffix_token_id", &t.fimSuf},
		{"tokenizer.ggml.middle_token_id", &t.fimMid},
	}
	if t.kind == WPM {
		// BERT's sequence start is [CLS]; older converters store it here.
		slots = append(slots, struct {
			key string
			id  *int32
		}{"tokenizer.ggml.cls_token_id", &t.bos})
	}
	for _, s := range slots {
		if *s.id >= 0 && int64(*s.id) >= n {
			*s.id = NoToken
		}
		if !m.Has(s.key) {
			continue
		}
		v, err := m.Int64(s.key)
		if err != nil {
			return fmt.Errorf("tokenizer: %w", err)
		}
		if v >= 0 && v < n {
			*s.id = int32(v)
		}
	}

	if v, ok, err := optBool(m, keyAddBOS); err != nil {
		return err
	} else if ok {
		t.addBOS = v
	}
	if v, ok, err := optBool(m, keyAddEOS); err != nil {
		return err
	} else if ok {
		t.addEOS = v
	}
	if t.kind != WPM && t.addBOS && t.bos == NoToken {
		return fmt.Errorf("tokenizer: %s is true, but there is no BOS token in a vocabulary of %d", keyAddBOS, n)
	}
	if t.addEOS && t.eos == NoToken {
		return fmt.Errorf("tokenizer: %s is true, but there is no EOS token in a vocabulary of %d", keyAddEOS, n)
	}
	if t.kind == WPM && (t.bos == NoToken || t.sep == NoToken) {
		return fmt.Errorf("tokenizer: WordPiece vocabulary of %d tokens lacks [CLS] (%d) or [SEP] (%d)", n, t.bos, t.sep)
	}
	return nil
}

// Texts that mark end-of-generation tokens, from llama.cpp's vocab loader
// (it detects them by text because converters do not always set ids).
var (
	eotTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
		"<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}
	eomTexts    = []string{"<|eom_id|>"}
	fimPreTexts = []string{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>"}
	fimSufTexts = []string{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>"}
	fimMidTexts = []string{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>"}
	fimPadTexts = []string{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}
	fimRepTexts = []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}
	fimSepTexts = []string{"<|file_sep|>"}
	eogTexts    = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
		"<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
		"<end_of_utterance>", "<｜end▁of▁sentence｜>"}
)

// detectByText fills unset EOT/EOM/FIM ids from token texts, marks such
// tokens control, and builds the end-of-generation set.
func (t *Tokenizer) detectByText() {
	find := func(slot *int32, texts []string) {
		if *slot != NoToken {
			return
		}
		for _, s := range texts {
			if id, ok := t.ids[s]; ok {
				*slot = id
				t.attrs[id] |= attrControl
				return
			}
		}
	}
	find(&t.eot, eotTexts)
	find(&t.eom, eomTexts)
	find(&t.fimPre, fimPreTexts)
	find(&t.fimSuf, fimSufTexts)
	find(&t.fimMid, fimMidTexts)
	find(&t.fimPad, fimPadTexts)
	find(&t.fimRep, fimRepTexts)
	find(&t.fimSep, fimSepTexts)

	// Control tokens named "unused" are unused.
	for id, a := range t.attrs {
		if a&attrControl != 0 && strings.Contains(t.texts[id], "unused") {
			t.attrs[id] |= attrUnused
		}
	}

	t.eog = make([]bool, len(t.texts))
	for _, id := range []int32{t.fimPad, t.fimRep, t.fimSep} {
		if id != NoToken {
			t.eog[id] = true
		}
	}
	for _, s := range eogTexts {
		if id, ok := t.ids[s]; ok {
			t.eog[id] = true
			t.attrs[id] |= attrControl
		}
	}
	// gpt-oss renders these structural tokens; llama.cpp forces them visible.
	for _, s := range []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"} {
		if id, ok := t.ids[s]; ok {
			t.attrs[id] = attrUserDefined
		}
	}
	for _, id := range []int32{t.eos, t.eot, t.eom} {
		if id != NoToken {
			t.eog[id] = true
		}
	}
	// In harmony-style vocabularies (<|return|> and <|call|>, or <|calls|>
	// and <|flush|>) <|end|> ends a message, not the generation.
	has := func(s string) bool { id, ok := t.ids[s]; return ok && t.eog[id] }
	if end, ok := t.ids["<|end|>"]; ok && t.eog[end] {
		if (has("<|return|>") && has("<|call|>")) || ((has("<|call|>") || has("<|calls|>")) && has("<|flush|>")) {
			t.eog[end] = false
			t.attrs[end] = attrUserDefined
		}
	}
}

func (t *Tokenizer) buildSpecials() {
	for id, a := range t.attrs {
		if a&(attrControl|attrUserDefined|attrUnknown) != 0 {
			t.specials = append(t.specials, int32(id))
		}
	}
	sort.SliceStable(t.specials, func(i, j int) bool {
		return len(t.texts[t.specials[i]]) > len(t.texts[t.specials[j]])
	})
	for k, id := range t.specials {
		b := t.texts[id][0]
		t.specialsByByte[b] = append(t.specialsByByte[b], int32(k))
	}
}

// applyNameAttrs sets the strip attributes llama.cpp assigns by model name:
// they change how whitespace around special tokens is tokenized.
func (t *Tokenizer) applyNameAttrs(m *gguf.Metadata) error {
	name, err := optString(m, keyGeneralName)
	if err != nil {
		return err
	}
	arch, err := optString(m, keyGeneralArch)
	if err != nil {
		return err
	}
	name = strings.ToLower(name)
	containsAny := func(s string, subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
	set := func(text string, a tokenAttr, on bool) {
		id, ok := t.ids[text]
		if !ok {
			return
		}
		if on {
			t.attrs[id] |= a
		} else {
			t.attrs[id] &^= a
		}
	}
	switch {
	case containsAny(t.pre, "jina-v2-de", "jina-v2-es", "jina-v2-code") || containsAny(arch, "nomic-bert-moe", "jina-bert-v3"):
		set("<mask>", attrLStrip, true)
	case containsAny(name, "phi-3", "phi3"):
		for _, id := range t.specials {
			t.attrs[id] |= attrRStrip
		}
		set("</s>", attrRStrip, true)
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			set(s, attrRStrip, false)
		}
	case containsAny(name, "modern-bert"):
		set("[MASK]", attrLStrip, true)
	}
	return nil
}

// Kind is the tokenization algorithm.
func (t *Tokenizer) Kind() Kind { return t.kind }

// Model is tokenizer.ggml.model.
func (t *Tokenizer) Model() string { return t.model }

// Pre is tokenizer.ggml.pre ("" when absent).
func (t *Tokenizer) Pre() string { return t.pre }

// VocabSize is the number of tokens.
func (t *Tokenizer) VocabSize() int { return len(t.texts) }

// BOS is the beginning-of-sequence id ([CLS] for WordPiece), or NoToken.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS is the end-of-sequence id, or NoToken.
func (t *Tokenizer) EOS() int32 { return t.eos }

// EOT is the end-of-turn id, or NoToken.
func (t *Tokenizer) EOT() int32 { return t.eot }

// EOM is the end-of-message id, or NoToken.
func (t *Tokenizer) EOM() int32 { return t.eom }

// UNK is the unknown-token id, or NoToken.
func (t *Tokenizer) UNK() int32 { return t.unk }

// SEP is the separator id, or NoToken.
func (t *Tokenizer) SEP() int32 { return t.sep }

// PAD is the padding id, or NoToken.
func (t *Tokenizer) PAD() int32 { return t.pad }

// AddBOS reports whether Encode with addSpecial prepends BOS.
func (t *Tokenizer) AddBOS() bool { return t.addBOS }

// AddEOS reports whether Encode with addSpecial appends EOS.
func (t *Tokenizer) AddEOS() bool { return t.addEOS }

// AddSpacePrefix reports whether SPM text gets the dummy-prefix space.
func (t *Tokenizer) AddSpacePrefix() bool { return t.addSpacePrefix }

// IsEOG reports whether id ends generation: EOS, EOT, EOM, the FIM
// pad/repo/file-separator tokens, and tokens whose text marks an end
// (<|eot_id|>, <|im_end|>, <|end|>, <end_of_turn>, <|endoftext|>, …).
func (t *Tokenizer) IsEOG(id int32) bool {
	return id >= 0 && int(id) < len(t.eog) && t.eog[id]
}

// IsControl reports whether id is a control token (rendered empty by Piece).
func (t *Tokenizer) IsControl(id int32) bool {
	return t.valid(id) && t.attrs[id]&attrControl != 0
}

// TokenText is the vocabulary entry of id as stored in the file ("" for an
// id outside the vocabulary).
func (t *Tokenizer) TokenText(id int32) string {
	if !t.valid(id) {
		return ""
	}
	return t.texts[id]
}

// TokenID finds the id whose vocabulary entry is exactly text.
func (t *Tokenizer) TokenID(text string) (int32, bool) {
	id, ok := t.ids[text]
	return id, ok
}

func (t *Tokenizer) valid(id int32) bool { return id >= 0 && int(id) < len(t.texts) }
