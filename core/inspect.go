// Package core is the small surface the UI and the CLI use: Inspect a file,
// Plan its offload against the device, Load it, and Eval tokens in a Session.
package core

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/core/model"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/core/tokenizer"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/units"
)

// TypeShare is how much of a file one tensor type takes.
type TypeShare struct {
	Type    string `json:"type"`
	Tensors int    `json:"tensors"`
	Bytes   int64  `json:"bytes"`
}

// ModelInfo is what the GGUF index says about a model, read without
// touching tensor data: instant even for a 70B file.
type ModelInfo struct {
	Path           string      `json:"path"`
	FileSize       int64       `json:"file_size"`
	GGUFVersion    uint32      `json:"gguf_version"`
	Name           string      `json:"name"`
	Arch           string      `json:"architecture"`
	ArchSupported  bool        `json:"architecture_supported"`
	Problem        string      `json:"problem,omitempty"` // why it cannot be loaded, if it cannot
	Params         int64       `json:"parameters"`
	FileType       string      `json:"file_type"`
	Quant          string      `json:"quantization"` // the type holding most weight bytes
	Types          []TypeShare `json:"tensor_types"`
	NLayers        int         `json:"block_count"`
	NCtxTrain      int         `json:"context_length"`
	NEmbd          int         `json:"embedding_length"`
	NHead          int         `json:"head_count"`
	NHeadKV        int         `json:"head_count_kv"`
	HeadDim        int         `json:"head_dim"`
	NFF            int         `json:"feed_forward_length"`
	TokenizerModel string      `json:"tokenizer_model"`
	VocabSize      int         `json:"vocab_size"`
	ChatTemplate   bool        `json:"chat_template"`
	// TemplateProblem says why the model's own chat template cannot be
	// used (it does not compile or render); chat then uses a built-in one
	// or none.
	TemplateProblem string         `json:"chat_template_problem,omitempty"`
	ExpertCount     int            `json:"expert_count,omitempty"`      // mixture of experts: experts per block
	ExpertUsed      int            `json:"expert_used_count,omitempty"` // … of which each token uses
	SlidingWindow   int            `json:"sliding_window,omitempty"`    // sliding-window attention span (positions)
	SlidingBlocks   int            `json:"sliding_blocks,omitempty"`    // … on this many blocks
	BlockBytes      []int64        `json:"block_bytes"`                 // per block: what the offload fit charges
	UnblockedBytes  int64          `json:"unblocked_bytes"`             // embeddings, final norm, output head
	TensorBytes     int64          `json:"tensor_bytes"`
	HParams         *model.HParams `json:"-"`

	// tok is the tokenizer read while inspecting, handed to the session.
	tok *tokenizer.Tokenizer

	// activations caches measureActivations by (context, KV type): the plan
	// view re-plans on every slider step, and the answer depends on neither.
	actMu       sync.Mutex
	activations map[actKey]int64
}

type actKey struct {
	ctx     int
	kv      gguf.GGMLType
	swaFull bool
}

// Inspect reads the index of a GGUF file.
func Inspect(path string) (*ModelInfo, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return inspectFile(f)
}

func inspectFile(f *gguf.File) (*ModelInfo, error) {
	info := &ModelInfo{Path: f.Path, FileSize: f.Size, GGUFVersion: f.Version, TensorBytes: f.TensorBytes()}
	m := &f.Meta
	info.Arch, _ = m.String("general.architecture")
	if info.Arch == "" {
		return nil, fmt.Errorf("%s: not a model: general.architecture is missing", f.Path)
	}
	info.Name, _ = m.String("general.name")
	if info.Name == "" {
		info.Name = strings.TrimSuffix(filepath.Base(f.Path), filepath.Ext(f.Path))
	}
	if ft, err := m.Uint32("general.file_type"); err == nil {
		info.FileType = gguf.FileTypeName(ft)
	}
	info.TokenizerModel, _ = m.String("tokenizer.ggml.model")
	if a, err := m.Array("tokenizer.ggml.tokens"); err == nil {
		info.VocabSize = a.Len()
	}
	if s, err := m.String("tokenizer.chat_template"); err == nil && s != "" {
		info.ChatTemplate = true
	}
	shares := map[gguf.GGMLType]*TypeShare{}
	sizes := make([]offload.TensorSize, 0, len(f.Tensors))
	for i := range f.Tensors {
		t := &f.Tensors[i]
		info.Params += t.NElements()
		s := shares[t.Type]
		if s == nil {
			s = &TypeShare{Type: t.Type.String()}
			shares[t.Type] = s
		}
		s.Tensors++
		s.Bytes += t.NBytes()
		sizes = append(sizes, offload.TensorSize{Name: t.Name, Bytes: t.NBytes()})
	}
	for _, s := range shares {
		info.Types = append(info.Types, *s)
	}
	sort.Slice(info.Types, func(i, j int) bool { return info.Types[i].Bytes > info.Types[j].Bytes })
	if len(info.Types) > 0 {
		info.Quant = info.Types[0].Type
	}
	if info.FileType == "" {
		info.FileType = "ALL_" + info.Quant
	}
	// The block count: from the metadata when present, else from the names.
	n, err := m.Uint32(info.Arch + ".block_count")
	if err == nil && n <= 1<<16 {
		info.NLayers = int(n)
	} else {
		for _, s := range sizes {
			if b, ok := offload.BlockOf(s.Name); ok && b+1 > info.NLayers && b < 1<<16 {
				info.NLayers = b + 1
			}
		}
	}
	if info.BlockBytes, info.UnblockedBytes, err = offload.BlockBytes(sizes, info.NLayers); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	arch, err := model.Lookup(info.Arch)
	if err != nil {
		info.Problem = err.Error()
		readGenericHParams(m, info)
		return info, nil
	}
	info.ArchSupported = true
	h, err := arch.HParams(f)
	if err != nil {
		info.Problem = err.Error()
		readGenericHParams(m, info)
		return info, nil
	}
	info.HParams = &h
	info.NCtxTrain, info.NEmbd, info.NHead, info.NHeadKV = h.NCtxTrain, h.NEmbd, h.NHead, h.NHeadKV
	info.HeadDim, info.NFF = h.HeadDim, h.NFF
	info.ExpertCount, info.ExpertUsed = h.NExpert, h.NExpertUsed
	info.SlidingWindow, info.SlidingBlocks = h.SlidingWindow, h.SlidingBlocks()
	if err := checkTensors(f, arch, h); err != nil {
		info.Problem = err.Error()
	}
	inspectTokenizer(m, info)
	return info, nil
}

// inspectTokenizer reads the tokenizer and tries the chat template, so a
// damaged vocabulary (duplicate tokens, arrays of the wrong length, a size
// that disagrees with the embedding) is a Problem before any load, and an
// unusable template is said once, here, instead of surfacing mid-chat.
func inspectTokenizer(m *gguf.Metadata, info *ModelInfo) {
	tok, err := readTokenizer(m, info.HParams.NVocab)
	if err != nil {
		if info.Problem != "" {
			info.Problem += "; "
		}
		info.Problem += err.Error()
		return
	}
	info.tok = tok
	if _, src := TemplateFor(m, tok); src.ModelErr != nil {
		info.TemplateProblem = templateProblem(src)
	}
}

// ErrVocabMismatch is a tokenizer whose size is not the embedding's row
// count: token ids would index past the weights, or never reach some rows.
var ErrVocabMismatch = errors.New("core: vocabulary size mismatch")

// templateProblem is the one line said about a model template that cannot
// be used, and what chat does instead.
func templateProblem(src chat.Source) string {
	instead := "chat falls back to plain text completion"
	if src.Kind == chat.SourceBuiltin {
		instead = fmt.Sprintf("chat uses the built-in %s template", src.Family)
	}
	return fmt.Sprintf("this model's chat template cannot be used (%v); %s", src.ModelErr, instead)
}

// readGenericHParams fills the card for architectures we cannot run.
func readGenericHParams(m *gguf.Metadata, info *ModelInfo) {
	get := func(k string) int {
		v, err := m.Uint32(info.Arch + "." + k)
		if err != nil {
			return 0
		}
		return int(v)
	}
	info.NCtxTrain = get("context_length")
	info.NEmbd = get("embedding_length")
	info.NHead = get("attention.head_count")
	info.NHeadKV = get("attention.head_count_kv")
	info.NFF = get("feed_forward_length")
}

// ErrUnsupportedTensors is returned when tensors use types the CPU backend
// cannot compute with, or have unexpected shapes.
var ErrUnsupportedTensors = errors.New("core: model tensors not usable")

// checkTensors verifies every tensor the graph reads exists with the
// expected shape and a type the CPU can run, naming every offender.
func checkTensors(f *gguf.File, arch model.Arch, h model.HParams) error {
	var problems []string
	for _, spec := range arch.Tensors(h) {
		ti, ok := f.Tensor(spec.Name)
		if !ok {
			if !spec.Optional {
				problems = append(problems, fmt.Sprintf("%q is missing", spec.Name))
			}
			continue
		}
		if !sameDims(ti.Dims, spec.Dims) {
			problems = append(problems, fmt.Sprintf("%q has shape %v, want %v", spec.Name, ti.Dims, spec.Dims))
			continue
		}
		if !quant.Supported(ti.Type) {
			problems = append(problems, fmt.Sprintf("%q: unsupported type %s", spec.Name, ti.Type))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnsupportedTensors, units.JoinFirst(problems, 6, "; "))
}

func sameDims(a, b []int64) bool {
	// Trailing 1s are equivalent ([n] == [n, 1]).
	trim := func(d []int64) []int64 {
		for len(d) > 1 && d[len(d)-1] == 1 {
			d = d[:len(d)-1]
		}
		return d
	}
	a, b = trim(a), trim(b)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
