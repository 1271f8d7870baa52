package coretest

import (
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"os"
	"testing"
)

// RefCase is one prompt of a *.ref.json (llama.cpp's reference outputs; the
// format is in ../shared/testdata/README.md).
type RefCase struct {
	Prompt      string    `json:"prompt"`
	Tokens      []int32   `json:"tokens"`
	LogitsFile  string    `json:"logits_file"`
	LogitsShape []int     `json:"logits_shape"`
	Greedy      []int32   `json:"greedy"`
	GreedyText  string    `json:"greedy_text"`
	Top2Gap     []float64 `json:"greedy_top2_gap"`
}

// RefSettings are the llama.cpp settings a reference was computed with
// (only those that change how a test must evaluate the prompt).
type RefSettings struct {
	// NUBatch is llama.cpp's n_ubatch: 1 means the prompt was evaluated one
	// token at a time (testdata/small/README.md says why); 0 means absent,
	// i.e. one batch.
	NUBatch int `json:"n_ubatch"`
}

// Ref is a whole *.ref.json.
type Ref struct {
	Model    string      `json:"model"`
	NVocab   int         `json:"n_vocab"`
	Settings RefSettings `json:"settings"`
	Cases    []RefCase   `json:"cases"`
}

// OneByOne reports whether the reference evaluated its prompts one token at
// a time.
func (r Ref) OneByOne() bool { return r.Settings.NUBatch == 1 }

// LoadRef reads a *.ref.json.
func LoadRef(t testing.TB, path string) Ref {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r Ref
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// ReadLogits reads a gzipped little-endian float32 logits file.
func ReadLogits(t testing.TB, path string) []float32 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}
