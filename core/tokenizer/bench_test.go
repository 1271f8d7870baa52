package tokenizer

import (
	"strings"
	"testing"

	"github.com/minfer/minfer/internal/ggtest"
)

// benchText is about 4 KB of mixed prose, code, numbers and non-Latin
// script, the size of a long chat prompt.
var benchText = strings.Repeat(`The quick brown fox jumps over the lazy dog. It's 12:45 and we've got 1,234,567 reasons
to write code like this:
    func main() { fmt.Println("Hello, 世界!") } // naïve café — “quoted”
Пример текста на русском языке, and some emoji 🦙🚀 too.

`, 16)

func BenchmarkEncode(b *testing.B) {
	for _, name := range []string{"llama-spm", "falcon", "deepseek-llm", "deepseek-coder", "mpt", "bert-bge"} {
		b.Run(name, func(b *testing.B) {
			tok := load(b, ggtest.Path(b, "vocab", "ggml-vocab-"+name+".gguf"))
			ids, err := tok.Encode(benchText, true, false)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(benchText)))
			b.ReportMetric(float64(len(ids)), "tokens")
			b.ResetTimer()
			for b.Loop() {
				if _, err := tok.Encode(benchText, true, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeStream(b *testing.B) {
	tok := load(b, ggtest.Path(b, "vocab", "ggml-vocab-llama-spm.gguf"))
	ids, err := tok.Encode(benchText, false, false)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		d := tok.NewStreamDecoder()
		for _, id := range ids {
			d.Add(id)
		}
		d.Flush()
	}
}
