package core

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/minfer/minfer/internal/ggtest"
)

// BenchmarkEval reports prefill and decode tokens/s on every synth model:
//
//	go test ./core -run '^$' -bench Eval -benchtime 3x
func BenchmarkEval(b *testing.B) {
	models := ggtest.Glob(b, "synth", "*.gguf")
	for _, path := range models {
		s, err := Load(context.Background(), path, cpuOnly(), nil)
		if err != nil {
			b.Fatal(err)
		}
		name := filepath.Base(path)
		b.Run(name+"/prefill128", func(b *testing.B) {
			toks := make([]int32, 128)
			for i := range toks {
				toks[i] = int32(100 + i)
			}
			for i := 0; i < b.N; i++ {
				s.Rewind(0)
				if _, err := s.Eval(context.Background(), toks, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(128*b.N)/b.Elapsed().Seconds(), "tok/s")
		})
		b.Run(name+"/decode", func(b *testing.B) {
			s.Rewind(0)
			for i := 0; i < b.N; i++ {
				if s.NPast() >= s.NCtxLen() {
					s.Rewind(0)
				}
				if _, err := s.Eval(context.Background(), []int32{int32(100 + i%1000)}, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
		})
		s.Close()
	}
}
