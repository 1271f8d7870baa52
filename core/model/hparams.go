// Package model holds Minfer's architectures (registered by name), their
// hyper-parameters read from GGUF metadata, and the graphs they build.
package model

import (
	"errors"
	"fmt"
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

// KVBytes is the cache size for nCtx positions over nLayers layers (K and V
// together) with rows of rowBytes, as KVRowBytes gives them.
func KVBytes(rowBytes int64, nCtx, nLayers int) int64 {
	return 2 * rowBytes * int64(nCtx) * int64(nLayers)
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
	if h.NHead == 0 || h.NEmbd%h.NHead != 0 {
		return h, fmt.Errorf("model: %s.embedding_length %d is not a multiple of attention.head_count %d", arch, h.NEmbd, h.NHead)
	}
	if h.NHeadKV == 0 || h.NHead%h.NHeadKV != 0 {
		return h, fmt.Errorf("model: %s.attention.head_count %d is not a multiple of head_count_kv %d", arch, h.NHead, h.NHeadKV)
	}
	h.HeadDim = r.uint("attention.key_length", h.NEmbd/h.NHead, false)
	h.RopeDims = r.uint("rope.dimension_count", h.HeadDim, false)
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
