package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/ggtest"
)

// outOfScope lists tokenizer models this package deliberately does not
// implement; a vocabulary using one must be refused with ErrUnsupported.
// Empty: every model with conformance vectors is implemented.
var outOfScope = map[string]bool{}

var (
	loadedMu sync.Mutex
	loaded   = map[string]*Tokenizer{}
)

// load opens a GGUF file and builds its tokenizer, caching per path so the
// 100k-entry vocabularies are parsed once per test binary.
func load(t testing.TB, path string) *Tokenizer {
	t.Helper()
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if tok, ok := loaded[path]; ok {
		return tok
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := FromGGUF(&f.Meta)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	loaded[path] = tok
	return tok
}

// readVectors splits an .inp file on the 21-byte separator and parses the
// matching .out lines.
func readVectors(t testing.TB, inpPath, outPath string) (texts []string, want [][]int32) {
	t.Helper()
	inp, err := os.ReadFile(inpPath)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	for pos := 0; pos < len(inp); {
		i := bytes.Index(inp[pos:], []byte(sep))
		if i < 0 {
			t.Fatalf("%s: text at byte %d has no separator after it", inpPath, pos)
		}
		texts = append(texts, string(inp[pos:pos+i]))
		pos += i + len(sep)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		t.Fatalf("%s has %d lines for %d texts", outPath, len(lines), len(texts))
	}
	for n, line := range lines {
		ids := []int32{}
		for _, f := range strings.Fields(line) {
			v, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				t.Fatalf("%s line %d: %v", outPath, n+1, err)
			}
			ids = append(ids, int32(v))
		}
		want = append(want, ids)
	}
	return texts, want
}

// TestVocabVectors runs llama.cpp's tokenizer conformance vectors: every
// text of every ggml-vocab-*.gguf that has .inp/.out must tokenize exactly
// (add_special=false, parse_special=false).
func TestVocabVectors(t *testing.T) {
	paths := ggtest.Glob(t, "vocab", "*.gguf")
	if len(paths) == 0 {
		t.Fatal("no vocab/*.gguf in the test data")
	}
	withVectors := 0
	for _, path := range paths {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "ggml-vocab-"), ".gguf")
		t.Run(name, func(t *testing.T) {
			inp, out := path+".inp", path+".out"
			if _, err := os.Stat(inp); err != nil {
				// Vocabulary only (baichuan): it must still load and encode.
				tok := load(t, path)
				if ids, err := tok.Encode("Hello world", false, false); err != nil || len(ids) == 0 {
					t.Fatalf("Encode(%q) = %v, %v", "Hello world", ids, err)
				}
				return
			}
			withVectors++
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			model, _ := f.Meta.String(keyModel)
			if outOfScope[model] {
				_, err := FromGGUF(&f.Meta)
				f.Close()
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("model %q is out of scope, but FromGGUF gave %v, want ErrUnsupported", model, err)
				}
				return
			}
			f.Close()
			tok := load(t, path)
			texts, want := readVectors(t, inp, out)
			pass := 0
			for i, text := range texts {
				got, err := tok.Encode(text, false, false)
				if err != nil {
					t.Errorf("text %d %q: %v", i, text, err)
					continue
				}
				if !slices.Equal(got, want[i]) {
					t.Errorf("text %d %q:\n got  %v\n want %v", i, text, got, want[i])
					continue
				}
				pass++
			}
			t.Logf("%s (%s, pre %q): %d/%d vectors pass", name, tok.Kind(), tok.Pre(), pass, len(texts))
		})
	}
	if withVectors == 0 {
		t.Fatal("no vocab file has .inp/.out vectors")
	}
}

// refFile is the part of <model>.ref.json this package checks.
type refFile struct {
	Model  string `json:"model"`
	NVocab int    `json:"n_vocab"`
	Cases  []struct {
		Prompt     string  `json:"prompt"`
		Tokens     []int32 `json:"tokens"`
		Greedy     []int32 `json:"greedy"`
		GreedyText string  `json:"greedy_text"`
		GreedyHex  string  `json:"greedy_text_hex"`
	} `json:"cases"`
}

// TestModelRefTokens checks the prompt tokens (add_special=true,
// parse_special=false) and the decoded greedy text of every model's
// llama.cpp reference.
func TestModelRefTokens(t *testing.T) {
	var refs []string
	for _, sub := range []string{"models", "synth"} {
		m := ggtest.Glob(t, sub, "*.ref.json")
		refs = append(refs, m...)
	}
	if len(refs) == 0 {
		t.Fatal("no *.ref.json in models/ or synth/")
	}
	for _, refPath := range refs {
		t.Run(strings.TrimSuffix(filepath.Base(refPath), ".ref.json"), func(t *testing.T) {
			raw, err := os.ReadFile(refPath)
			if err != nil {
				t.Fatal(err)
			}
			var ref refFile
			if err := json.Unmarshal(raw, &ref); err != nil {
				t.Fatalf("%s: %v", refPath, err)
			}
			modelPath := filepath.Join(filepath.Dir(refPath), ref.Model)
			if _, err := os.Stat(modelPath); err != nil {
				t.Fatalf("reference names %s: %v", ref.Model, err)
			}
			tok := load(t, modelPath)
			if tok.VocabSize() != ref.NVocab {
				t.Errorf("VocabSize = %d, reference n_vocab %d", tok.VocabSize(), ref.NVocab)
			}
			for i, c := range ref.Cases {
				t.Run(fmt.Sprintf("case%d", i), func(t *testing.T) {
					got, err := tok.Encode(c.Prompt, true, false)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, c.Tokens) {
						t.Errorf("Encode(%q):\n got  %v\n want %v", c.Prompt, got, c.Tokens)
					}
					// BOS renders empty; the SPM dummy prefix stays.
					if got, want := tok.Decode(c.Tokens), " "+c.Prompt; got != want {
						t.Errorf("Decode(tokens) = %q, want %q", got, want)
					}
					text := tok.Decode(c.Greedy)
					if c.GreedyHex != "" {
						if h := fmt.Sprintf("%x", text); h != c.GreedyHex {
							t.Errorf("Decode(greedy) bytes %s, want %s", h, c.GreedyHex)
						}
					} else if text != c.GreedyText {
						t.Errorf("Decode(greedy) = %q, want %q", text, c.GreedyText)
					}
				})
			}
		})
	}
}
