// Package synth writes random-weight llama models of any size and weight
// type, so benchmarks run on models the project makes itself.
package synth

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"

	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// Config is a llama shape.
type Config struct {
	NEmbd, NLayer, NHead, NHeadKV, NFF, NVocab, Ctx int
	Type                                            gguf.GGMLType // block matmul weights
	OutputType                                      gguf.GGMLType // token_embd / output (0: Q6_K for K/4-bit types, else Type)
	// Mix is a llama.cpp file type's per-tensor rule instead of one Type:
	// "" (every block mat-mul is Type), "Q4_K_M" or "Q5_K_M" (see mixType).
	Mix  string
	Seed uint64
}

// Mixes are the llama.cpp file types Mix names, with their base type and
// general.file_type value (llama_ftype).
var Mixes = map[string]struct {
	Base     gguf.GGMLType
	FileType uint32
}{
	"Q4_K_M": {gguf.TypeQ4_K, 15},
	"Q5_K_M": {gguf.TypeQ5_K, 17},
}

// useMoreBits is llama.cpp's choice of the blocks whose attn_v and
// ffn_down get more bits in the _M mixes: the first and last eighth and
// every third block between.
func useMoreBits(il, n int) bool {
	return il < n/8 || il >= 7*n/8 || (il-n/8)%3 == 2
}

// tensorType is the type of block il's mat-mul weight (role "attn_q",
// "ffn_down", …): Type, or the mix's rule as llama.cpp's quantizer applies
// it to a llama model (attn_v and ffn_down in Q6_K where useMoreBits,
// everything else the base type; the output head is Q6_K by outputType).
func (c Config) tensorType(role string, il int) gguf.GGMLType {
	if c.Mix == "" {
		return c.Type
	}
	if (role == "attn_v" || role == "ffn_down") && useMoreBits(il, c.NLayer) {
		return gguf.TypeQ6_K
	}
	return c.Type
}

// Presets are shapes of well-known models.
var Presets = map[string]Config{
	"tiny": {NEmbd: 256, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 512, NVocab: 32000, Ctx: 512},
	"160m": {NEmbd: 768, NLayer: 12, NHead: 12, NHeadKV: 12, NFF: 2048, NVocab: 32000, Ctx: 2048},
	"1b":   {NEmbd: 2048, NLayer: 22, NHead: 32, NHeadKV: 4, NFF: 5632, NVocab: 32000, Ctx: 2048},   // TinyLlama-1.1B
	"7b":   {NEmbd: 4096, NLayer: 32, NHead: 32, NHeadKV: 32, NFF: 11008, NVocab: 32000, Ctx: 4096}, // Llama-2-7B
	"8b":   {NEmbd: 4096, NLayer: 32, NHead: 32, NHeadKV: 8, NFF: 14336, NVocab: 128256, Ctx: 4096}, // Llama-3-8B shape
}

// PresetNames lists the presets.
func PresetNames() string { return "tiny, 160m, 1b, 7b, 8b" }

func (c Config) outputType() gguf.GGMLType {
	if c.OutputType != 0 {
		return c.OutputType
	}
	switch c.Type {
	case gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ2_K, gguf.TypeQ3_K:
		return gguf.TypeQ6_K
	}
	return c.Type
}

// Validate checks the shape against the weight types' block sizes.
func (c Config) Validate() error {
	if c.NEmbd <= 0 || c.NLayer <= 0 || c.NHead <= 0 || c.NHeadKV <= 0 || c.NFF <= 0 || c.NVocab < 259 || c.Ctx <= 0 {
		return fmt.Errorf("synth: shape %+v has a non-positive size (or fewer than 259 tokens)", c)
	}
	if c.Mix != "" {
		m, ok := Mixes[c.Mix]
		if !ok {
			return fmt.Errorf("synth: mix %q: want Q4_K_M or Q5_K_M", c.Mix)
		}
		if c.Type != m.Base {
			return fmt.Errorf("synth: mix %s is based on %s, not %s", c.Mix, m.Base, c.Type)
		}
	}
	if c.NEmbd%c.NHead != 0 || c.NHead%c.NHeadKV != 0 {
		return fmt.Errorf("synth: %d heads, %d KV heads, embedding %d do not divide", c.NHead, c.NHeadKV, c.NEmbd)
	}
	if !quant.Supported(c.Type) {
		return fmt.Errorf("synth: weight type %s cannot be generated", c.Type)
	}
	for _, n := range []int{c.NEmbd, c.NFF} {
		if n%c.Type.BlockSize() != 0 || n%c.outputType().BlockSize() != 0 || (c.Mix != "" && n%gguf.TypeQ6_K.BlockSize() != 0) {
			return fmt.Errorf("synth: row of %d is not a multiple of %s's block of %d", n, c.Type, c.Type.BlockSize())
		}
	}
	return nil
}

// Write streams a model with normal(0, 0.02) weights to w; norm weights
// are 1 + normal(0, 0.05). Memory use is a few rows, whatever the size.
func Write(w io.Writer, c Config) error {
	b, err := Build(c)
	if err != nil {
		return err
	}
	_, err = b.WriteTo(w)
	return err
}

// Build is the model Write writes, as a builder whose tensors are filled
// while it writes (Builder.WriteFile puts it at a path atomically).
func Build(c Config) (*gguf.Builder, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	b := gguf.NewBuilder()
	b.SetString("general.architecture", "llama")
	name := c.Type.String()
	if c.Mix != "" {
		name = c.Mix
		b.SetUint32("general.file_type", Mixes[c.Mix].FileType)
	}
	b.SetString("general.name", fmt.Sprintf("minfer-synth-%dx%d-%s", c.NLayer, c.NEmbd, name))
	b.SetUint32("llama.context_length", uint32(c.Ctx))
	b.SetUint32("llama.embedding_length", uint32(c.NEmbd))
	b.SetUint32("llama.block_count", uint32(c.NLayer))
	b.SetUint32("llama.feed_forward_length", uint32(c.NFF))
	b.SetUint32("llama.attention.head_count", uint32(c.NHead))
	b.SetUint32("llama.attention.head_count_kv", uint32(c.NHeadKV))
	b.SetFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	b.SetFloat32("llama.rope.freq_base", 10000)
	writeVocab(b, c.NVocab)
	hd := c.NEmbd / c.NHead
	tensor := uint64(0)
	add := func(name string, t gguf.GGMLType, rowLen, rows int, norm bool) {
		dims := []int64{int64(rowLen), int64(rows)}
		if norm {
			dims = dims[:1] // norm weights are 1-D in real files
		}
		tensor++
		seed := c.Seed ^ tensor<<32
		b.AddTensorFunc(name, t, dims, func(w io.Writer) error {
			return writeRows(w, t, rowLen, rows, norm, seed)
		})
	}
	embd := c.outputType()
	if c.Mix != "" {
		embd = c.Type // llama.cpp's _M mixes keep the embedding in the base type
	}
	add("token_embd.weight", embd, c.NEmbd, c.NVocab, false)
	add("output_norm.weight", gguf.TypeF32, c.NEmbd, 1, true)
	add("output.weight", c.outputType(), c.NEmbd, c.NVocab, false)
	for il := 0; il < c.NLayer; il++ {
		p := fmt.Sprintf("blk.%d.", il)
		add(p+"attn_norm.weight", gguf.TypeF32, c.NEmbd, 1, true)
		add(p+"attn_q.weight", c.tensorType("attn_q", il), c.NEmbd, c.NEmbd, false)
		add(p+"attn_k.weight", c.tensorType("attn_k", il), c.NEmbd, hd*c.NHeadKV, false)
		add(p+"attn_v.weight", c.tensorType("attn_v", il), c.NEmbd, hd*c.NHeadKV, false)
		add(p+"attn_output.weight", c.tensorType("attn_output", il), c.NEmbd, c.NEmbd, false)
		add(p+"ffn_norm.weight", gguf.TypeF32, c.NEmbd, 1, true)
		add(p+"ffn_gate.weight", c.tensorType("ffn_gate", il), c.NEmbd, c.NFF, false)
		add(p+"ffn_up.weight", c.tensorType("ffn_up", il), c.NEmbd, c.NFF, false)
		add(p+"ffn_down.weight", c.tensorType("ffn_down", il), c.NFF, c.NEmbd, false)
	}
	if err := b.Err(); err != nil {
		return nil, err
	}
	return b, nil
}

// chunkRows is how many rows one worker fills and quantizes at a time;
// each chunk has its own random stream (seeded by the tensor and the chunk
// index), so the file is the same whatever the number of workers.
const chunkRows = 64

// writeRows fills and quantizes a tensor's rows on every CPU, chunk by
// chunk, and writes them in order; memory use is a few chunks per worker.
func writeRows(w io.Writer, t gguf.GGMLType, rowLen, rows int, norm bool, seed uint64) error {
	rb, err := t.RowBytes(int64(rowLen))
	if err != nil {
		return err
	}
	workers := runtime.GOMAXPROCS(0)
	nChunks := (rows + chunkRows - 1) / chunkRows
	bufs := make([][]byte, workers)
	for i := range bufs {
		bufs[i] = make([]byte, int(rb)*chunkRows)
	}
	for c0 := 0; c0 < nChunks; c0 += workers {
		n := min(workers, nChunks-c0)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for k := 0; k < n; k++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				errs[k] = fillChunk(bufs[k], t, rowLen, int(rb), min(chunkRows, rows-(c0+k)*chunkRows), norm, seed, uint64(c0+k))
			}(k)
		}
		wg.Wait()
		for k := 0; k < n; k++ {
			if errs[k] != nil {
				return errs[k]
			}
			nr := min(chunkRows, rows-(c0+k)*chunkRows)
			if _, err := w.Write(bufs[k][:nr*int(rb)]); err != nil {
				return err
			}
		}
	}
	return nil
}

// fillChunk draws nr rows (normal(0, 0.02), or 1 + normal(0, 0.05) for
// norms) from the chunk's own stream and quantizes them into out.
func fillChunk(out []byte, t gguf.GGMLType, rowLen, rb, nr int, norm bool, seed, chunk uint64) error {
	rng := rand.New(rand.NewPCG(seed, 0x5eed+chunk))
	row := make([]float32, rowLen)
	for r := 0; r < nr; r++ {
		for i := range row {
			if norm {
				row[i] = 1 + float32(rng.NormFloat64()*0.05)
			} else {
				row[i] = float32(rng.NormFloat64() * 0.02)
			}
		}
		if err := quant.QuantizeWeights(t, row, out[r*rb:(r+1)*rb]); err != nil {
			return err
		}
	}
	return nil
}

// writeVocab gives the model a small SentencePiece-style vocabulary with
// byte fallback, so it tokenizes any text and can be chatted with.
func writeVocab(b *gguf.Builder, n int) {
	toks := make([]string, n)
	types := make([]int32, n)
	scores := make([]float32, n)
	toks[0], toks[1], toks[2] = "<unk>", "<s>", "</s>"
	types[0], types[1], types[2] = 2, 3, 3
	for i := 0; i < 256; i++ {
		toks[3+i] = fmt.Sprintf("<0x%02X>", i)
		types[3+i] = 6
	}
	words := strings.Fields("▁the ▁a ▁and ▁to ▁of ▁was ▁in ▁he ▁she ▁it ▁day ▁time ▁once ▁upon ▁there ▁little")
	for i := 259; i < n; i++ {
		if k := i - 259; k < len(words) {
			toks[i] = words[k]
		} else {
			toks[i] = fmt.Sprintf("▁w%d", i)
		}
		types[i] = 1
		scores[i] = -float32(math.Log(float64(i)))
	}
	b.SetString("tokenizer.ggml.model", "llama")
	b.SetStrings("tokenizer.ggml.tokens", toks)
	b.SetFloat32s("tokenizer.ggml.scores", scores)
	b.SetInt32s("tokenizer.ggml.token_type", types)
	b.SetUint32("tokenizer.ggml.bos_token_id", 1)
	b.SetUint32("tokenizer.ggml.eos_token_id", 2)
	b.SetUint32("tokenizer.ggml.unknown_token_id", 0)
}
