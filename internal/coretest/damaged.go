package coretest

import "github.com/minfer/minfer/gguf"

// DamagedTokenizer is one way a file can be damaged past its index: the
// GGUF parses, the tensors are fine, and the tokenizer or template is not.
type DamagedTokenizer struct {
	Name string
	Edit func(f *gguf.File, b *gguf.Builder) error
	// Problem is part of ModelInfo.Problem (the load is refused); empty
	// when the damage is tolerated the way llama.cpp tolerates it.
	Problem string
	// Template is part of ModelInfo.TemplateProblem.
	Template string
}

// DamagedTokenizers are the edits, for Rewrite of stories260K, that make the damaged copies (an SPM
// vocabulary of 512 tokens) that core, the CLI and the window are tested
// with.
func DamagedTokenizers() []DamagedTokenizer {
	tokens := func(f *gguf.File) []string {
		s, _ := f.Meta.Strings("tokenizer.ggml.tokens")
		return append([]string(nil), s...)
	}
	scores := func(f *gguf.File) []float32 {
		s, _ := f.Meta.Float32s("tokenizer.ggml.scores")
		return append([]float32(nil), s...)
	}
	types := func(f *gguf.File) []int32 {
		s, _ := f.Meta.Int32s("tokenizer.ggml.token_type")
		return append([]int32(nil), s...)
	}
	// asBPE turns the vocabulary into a byte-level BPE one with the given
	// merges: the tokens stay, so the model still runs.
	asBPE := func(merges []string) func(f *gguf.File, b *gguf.Builder) error {
		return func(f *gguf.File, b *gguf.Builder) error {
			b.SetString("tokenizer.ggml.model", "gpt2")
			b.SetString("tokenizer.ggml.pre", "default")
			b.SetStrings("tokenizer.ggml.merges", merges)
			return b.Err()
		}
	}
	return []DamagedTokenizer{
		{Name: "duplicate token string", Edit: func(f *gguf.File, b *gguf.Builder) error {
			t := tokens(f)
			t[300] = t[301]
			b.SetStrings("tokenizer.ggml.tokens", t)
			return b.Err()
		}, Problem: "duplicate token"},
		{Name: "fewer tokens than embedding rows", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.SetStrings("tokenizer.ggml.tokens", tokens(f)[:500])
			b.SetFloat32s("tokenizer.ggml.scores", scores(f)[:500])
			b.SetInt32s("tokenizer.ggml.token_type", types(f)[:500])
			return b.Err()
		}, Problem: "tokenizer has 500 tokens, the model's embedding 512"},
		{Name: "more tokens than embedding rows", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.SetStrings("tokenizer.ggml.tokens", append(tokens(f), "extra1", "extra2"))
			b.SetFloat32s("tokenizer.ggml.scores", append(scores(f), 0, 0))
			b.SetInt32s("tokenizer.ggml.token_type", append(types(f), 1, 1))
			return b.Err()
		}, Problem: "tokenizer has 514 tokens, the model's embedding 512"},
		{Name: "scores too short", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.SetFloat32s("tokenizer.ggml.scores", scores(f)[:10])
			return b.Err()
		}, Problem: "tokenizer.ggml.scores has 10 entries for 512 tokens"},
		{Name: "scores too long", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.SetFloat32s("tokenizer.ggml.scores", append(scores(f), 1, 2, 3))
			return b.Err()
		}, Problem: "tokenizer.ggml.scores has 515 entries for 512 tokens"},
		{Name: "token types too short", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.SetInt32s("tokenizer.ggml.token_type", types(f)[:1])
			return b.Err()
		}, Problem: "tokenizer.ggml.token_type has 1 entries for 512 tokens"},
		{Name: "token types of the wrong type", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.SetStrings("tokenizer.ggml.token_type", tokens(f))
			return b.Err()
		}, Problem: "tokenizer.ggml.token_type"},
		{Name: "tokens not strings", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.SetInt32s("tokenizer.ggml.tokens", types(f))
			return b.Err()
		}, Problem: "tokenizer.ggml.tokens"},
		{Name: "no tokens", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.Delete("tokenizer.ggml.tokens")
			return b.Err()
		}, Problem: "tokenizer.ggml.tokens"},
		{Name: "unsupported tokenizer model", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.SetString("tokenizer.ggml.model", "t5")
			return b.Err()
		}, Problem: `tokenizer model "t5"`},
		{Name: "BOS and EOS ids out of range", Edit: func(f *gguf.File, b *gguf.Builder) error {
			// llama.cpp keeps the SPM defaults (BOS 1, EOS 2) for ids
			// outside the vocabulary; so do we, and the model runs.
			b.SetUint32("tokenizer.ggml.bos_token_id", 1<<31)
			b.SetUint32("tokenizer.ggml.eos_token_id", 0xFFFFFFFF)
			b.SetUint32("tokenizer.ggml.unknown_token_id", 99999)
			return b.Err()
		}},
		{Name: "BOS id of the wrong type", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.SetString("tokenizer.ggml.bos_token_id", "one")
			return b.Err()
		}, Problem: "tokenizer.ggml.bos_token_id"},
		{Name: "BPE merges that do not parse", Edit: asBPE([]string{"", " ", "nospace", "  leading", "a b c", "\xff\xfe x"})},
		{Name: "BPE merges pointing nowhere", Edit: asBPE([]string{"Ġzz qq", "no such", "x y", "qq zz"})},
		{Name: "BPE merges not strings", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.SetString("tokenizer.ggml.model", "gpt2")
			b.SetString("tokenizer.ggml.pre", "default")
			b.SetInt32s("tokenizer.ggml.merges", []int32{1, 2, 3})
			return b.Err()
		}, Problem: "tokenizer.ggml.merges"},
		{Name: "BPE without merges", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.SetString("tokenizer.ggml.model", "gpt2")
			b.SetString("tokenizer.ggml.pre", "default")
			return b.Err()
		}, Problem: "BPE vocabulary needs merges"},
		{Name: "chat template not valid Jinja", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.SetString("tokenizer.chat_template", "{% for m in messages %}{{ m.content }")
			return b.Err()
		}, Template: "this model's chat template cannot be used"},
		{Name: "chat template that raises", Edit: func(f *gguf.File, b *gguf.Builder) error {
			b.SetString("tokenizer.chat_template", "{{ raise_exception('no chat for you') }}")
			return b.Err()
		}, Template: "no chat for you"},
	}
}
