// Package model holds Minfer's architectures (registered by name), their
// hyper-parameters read from GGUF metadata, and the graphs they build.
package model

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/gguf"
)

// ErrUnsupportedArch is returned for an architecture with no builder.
var ErrUnsupportedArch = errors.New("model: unsupported architecture")

// HParams are the hyper-parameters a graph needs.
type HParams struct {
	Arch        string
	NVocab      int
	NCtxTrain   int
	NCtxOrig    int // rope.scaling.original_context_length (Phi-3's factor choice)
	NEmbd       int
	NLayer      int
	NFF         int
	NHead       int
	NHeadKV     int
	HeadDim     int
	RMSEps      float32
	RopeDims    int
	RopeBase    float32
	RopeScale   float32 // frequency scale (1/linear factor)
	RopeNeoX    bool
	TiedOutput  bool // no output.weight: token_embd is the output head
	QKVBias     bool
	HasRopeFreq bool

	// QScale multiplies q·k: 1/√head_size unless the architecture says
	// otherwise (Gemma 27B: 1/√(n_embd/n_head)).
	QScale float32

	// Sliding-window attention: SlidingWindow positions (0: none), on the
	// blocks SWAPattern picks (llama.cpp's n_pattern: block il slides when
	// il mod n < n−1; 0: every block). Sliding blocks may have their own
	// rope base and scale.
	SlidingWindow int
	SWAPattern    int
	SWARopeBase   float32
	SWARopeScale  float32
	// SWAFull keeps every position in sliding blocks too (llama.cpp's
	// --swa-full): more memory, the same results.
	SWAFull bool

	// Gemma 2's soft caps (0: none).
	AttnSoftCap, FinalSoftCap float32

	// Mixture of experts (NExpert 0: dense). NFFExp and NFFShexp are the
	// routed and shared experts' hidden sizes.
	NExpert, NExpertUsed int
	NFFExp, NFFShexp     int
}

// MaxUBatch bounds the tokens of one step: longer prompts run in chunks.
// A sliding block's cache ring holds its window plus one step.
const MaxUBatch = 512

// Sliding reports whether block il uses sliding-window attention.
func (h HParams) Sliding(il int) bool {
	if h.SlidingWindow <= 0 {
		return false
	}
	return h.SWAPattern == 0 || il%h.SWAPattern < h.SWAPattern-1
}

// CacheRows is the number of KV cache rows block il keeps for a context of
// nCtx: every position, or for a sliding block a ring of its window plus
// one step's tokens (what one step's attention can reach), as llama.cpp's
// sliding-window cache does.
func (h HParams) CacheRows(il, nCtx int) int {
	if h.Sliding(il) {
		return h.SWARows(nCtx)
	}
	return nCtx
}

// SWARows is the number of KV cache rows every sliding block keeps for a
// context of nCtx: its ring (window plus one step), or every position with
// SWAFull.
func (h HParams) SWARows(nCtx int) int {
	if h.SWAFull {
		return nCtx
	}
	return min(nCtx, h.SlidingWindow+MaxUBatch)
}

// SlidingBlocks counts the blocks with sliding-window attention.
func (h HParams) SlidingBlocks() int {
	n := 0
	for il := 0; il < h.NLayer; il++ {
		if h.Sliding(il) {
			n++
		}
	}
	return n
}

// KVRow is the element count of one cache row (one position) of K or V.
func (h HParams) KVRow() int { return h.HeadDim * h.NHeadKV }

// KVRowBytes is the byte size of one cache row (one position of K or of V)
// with elements of type t; an error when t cannot hold a row of KVRow
// elements (a block type whose block does not divide it, or an overflow).
func (h HParams) KVRowBytes(t gguf.GGMLType) (int64, error) {
	row, err := t.RowBytes(int64(h.KVRow()))
	if err != nil {
		return 0, fmt.Errorf("model: KV cache of %s: %w", t, err)
	}
	return row, nil
}

// KVLayerBytes is block il's cache (K and V) for a context of nCtx with
// elements of type t: sliding blocks are charged their ring only.
//
// A type KVRowBytes rejects counts 0 bytes here: Plan refuses such a type
// before anything is counted, and Load checks it again before allocating,
// so no plan or session ever reads that 0.
func (h HParams) KVLayerBytes(il, nCtx int, t gguf.GGMLType) int64 {
	row, err := h.KVRowBytes(t)
	if err != nil {
		return 0
	}
	return 2 * row * int64(h.CacheRows(il, nCtx))
}

// KVBytes is the cache size for a context of nCtx over the blocks which
// picks (every block when nil) with elements of type t.
func (h HParams) KVBytes(nCtx int, t gguf.GGMLType, which func(il int) bool) int64 {
	var n int64
	for il := 0; il < h.NLayer; il++ {
		if which == nil || which(il) {
			n += h.KVLayerBytes(il, nCtx, t)
		}
	}
	return n
}

// Arch builds one family of models.
type Arch interface {
	// Name is the general.architecture value.
	Name() string
	// HParams reads and checks the hyper-parameters.
	HParams(f *gguf.File) (HParams, error)
	// Tensors lists the tensors the graph reads, with their expected shapes
	// (optional ones marked).
	Tensors(h HParams) []TensorSpec
	// Build adds one step's nodes and returns the logits node.
	Build(b *Builder) (*graph.Node, error)
}

// TensorSpec is a tensor the architecture reads.
type TensorSpec struct {
	Name     string
	Dims     []int64
	Optional bool
}

var registry = map[string]Arch{}

// Register adds an architecture; it panics on a duplicate name (a
// programming error at init time).
func Register(a Arch) {
	if _, dup := registry[a.Name()]; dup {
		panic("model: architecture registered twice: " + a.Name())
	}
	registry[a.Name()] = a
}

// Lookup finds the architecture of a file.
func Lookup(name string) (Arch, error) {
	a, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (supported: %s)", ErrUnsupportedArch, name, strings.Join(Supported(), ", "))
	}
	return a, nil
}

// Supported lists the registered architecture names.
func Supported() []string {
	var out []string
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// metaReader reads "{arch}.key" values, naming the key in every error.
type metaReader struct {
	m    *gguf.Metadata
	arch string
	err  error
}

func (r *metaReader) key(k string) string { return r.arch + "." + k }

func (r *metaReader) uint(k string, def int, required bool) int {
	v, err := r.m.Uint32(r.key(k))
	if errors.Is(err, gguf.ErrKeyNotFound) && !required {
		return def
	}
	if err != nil {
		if r.err == nil {
			r.err = fmt.Errorf("model: %w", err)
		}
		return def
	}
	if v > 1<<24 {
		if r.err == nil {
			r.err = fmt.Errorf("model: %s = %d is absurd", r.key(k), v)
		}
		return def
	}
	return int(v)
}

func (r *metaReader) float(k string, def float32) float32 {
	v, err := r.m.Float32(r.key(k))
	if errors.Is(err, gguf.ErrKeyNotFound) {
		return def
	}
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("model: %w", err)
	}
	return v
}

// readLlamaLike reads the hyper-parameters shared by the llama family.
func readLlamaLike(f *gguf.File, arch string, neox bool) (HParams, error) {
	r := &metaReader{m: &f.Meta, arch: arch}
	h := HParams{Arch: arch, RopeNeoX: neox}
	h.NCtxTrain = r.uint("context_length", 0, true)
	h.NEmbd = r.uint("embedding_length", 0, true)
	h.NLayer = r.uint("block_count", 0, true)
	h.NFF = r.uint("feed_forward_length", 0, true)
	h.NHead = r.uint("attention.head_count", 0, true)
	h.NHeadKV = r.uint("attention.head_count_kv", h.NHead, false)
	h.RMSEps = r.float("attention.layer_norm_rms_epsilon", 1e-5)
	h.RopeBase = r.float("rope.freq_base", 10000)
	h.RopeScale = 1
	if r.err != nil {
		return h, r.err
	}
	if h.NHead == 0 || (h.NEmbd%h.NHead != 0 && !f.Meta.Has(r.key("attention.key_length"))) {
		return h, fmt.Errorf("model: %s.embedding_length %d is not a multiple of attention.head_count %d", arch, h.NEmbd, h.NHead)
	}
	if h.NHeadKV == 0 || h.NHead%h.NHeadKV != 0 {
		return h, fmt.Errorf("model: %s.attention.head_count %d is not a multiple of head_count_kv %d", arch, h.NHead, h.NHeadKV)
	}
	h.HeadDim = r.uint("attention.key_length", h.NEmbd/h.NHead, false)
	if v := r.uint("attention.value_length", h.HeadDim, false); v != h.HeadDim && r.err == nil {
		return h, fmt.Errorf("model: %s.attention.value_length %d differs from key_length %d", arch, v, h.HeadDim)
	}
	h.QScale = float32(1 / math.Sqrt(float64(h.HeadDim)))
	h.RopeDims = r.uint("rope.dimension_count", h.HeadDim, false)
	h.SlidingWindow = r.uint("attention.sliding_window", 0, false)
	h.NExpert = r.uint("expert_count", 0, false)
	h.NExpertUsed = r.uint("expert_used_count", 0, false)
	h.NFFExp = r.uint("expert_feed_forward_length", h.NFF, false)
	h.NFFShexp = r.uint("expert_shared_feed_forward_length", h.NFF, false)
	if h.NExpert > 0 && (h.NExpertUsed <= 0 || h.NExpertUsed > h.NExpert || h.NExpert > 4096) {
		return h, fmt.Errorf("model: %s.expert_used_count %d of expert_count %d", arch, h.NExpertUsed, h.NExpert)
	}
	if r.err != nil {
		return h, r.err
	}
	if h.RopeDims > h.HeadDim || h.RopeDims%2 != 0 {
		return h, fmt.Errorf("model: %s.rope.dimension_count %d does not fit head size %d", arch, h.RopeDims, h.HeadDim)
	}
	if h.NLayer == 0 || h.NFF == 0 || h.NCtxTrain == 0 {
		return h, fmt.Errorf("model: %s: block_count %d, feed_forward_length %d, context_length %d must be positive", arch, h.NLayer, h.NFF, h.NCtxTrain)
	}
	// Bounds far above any real model keep absurd metadata from turning
	// into huge allocations before the tensors are even checked.
	for _, c := range []struct {
		key      string
		val, max int
	}{
		{"block_count", h.NLayer, 4096}, {"embedding_length", h.NEmbd, 1 << 18}, {"feed_forward_length", h.NFF, 1 << 20},
		{"attention.head_count", h.NHead, 4096}, {"attention.key_length", h.HeadDim, 4096},
	} {
		if c.val > c.max {
			return h, fmt.Errorf("model: %s.%s = %d is absurd (at most %d)", arch, c.key, c.val, c.max)
		}
	}
	if st, err := f.Meta.String(arch + ".rope.scaling.type"); err == nil {
		switch st {
		case "none":
		case "linear":
			factor := r.float("rope.scaling.factor", 1)
			if factor <= 0 {
				return h, fmt.Errorf("model: %s.rope.scaling.factor %g must be positive", arch, factor)
			}
			h.RopeScale = 1 / factor
		default:
			return h, fmt.Errorf("model: %s.rope.scaling.type %q is not supported (none, linear)", arch, st)
		}
	}
	if r.err != nil {
		return h, r.err
	}
	h.SWARopeBase, h.SWARopeScale = h.RopeBase, h.RopeScale
	emb, ok := f.Tensor("token_embd.weight")
	if !ok {
		return h, fmt.Errorf("model: tensor \"token_embd.weight\" is missing")
	}
	if len(emb.Dims) != 2 || emb.Dims[0] != int64(h.NEmbd) {
		return h, fmt.Errorf("model: token_embd.weight has shape %v, want [%d, n_vocab]", emb.Dims, h.NEmbd)
	}
	h.NVocab = int(emb.Dims[1])
	_, hasOut := f.Tensor("output.weight")
	h.TiedOutput = !hasOut
	_, h.QKVBias = f.Tensor("blk.0.attn_q.bias")
	_, h.HasRopeFreq = f.Tensor("rope_freqs.weight")
	return h, nil
}
