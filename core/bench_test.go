package core

import (
	"context"
	"os"
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

// BenchmarkModelFile is BenchmarkEval on the model at $MINFER_BENCH_MODEL
// (skipped when unset), for profiling a large file:
//
//	MINFER_BENCH_MODEL=bench/tmp/1b-Q4_0.gguf go test ./core -run '^$' \
//	    -bench ModelFile -benchtime 2x -cpuprofile cpu.prof
func BenchmarkModelFile(b *testing.B) {
	path := os.Getenv("MINFER_BENCH_MODEL")
	if path == "" {
		b.Skip("MINFER_BENCH_MODEL is not set")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join("..", path) // tests run in core/
	}
	opts := cpuOnly()
	opts.Threads = 2
	s, err := Load(context.Background(), path, opts, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchPrefillDecode(b, s)
}

// benchPrefillDecode runs a 128-token prefill and one-token decode steps
// on s as sub-benchmarks reporting tok/s.
func benchPrefillDecode(b *testing.B, s *Session) {
	toks := make([]int32, 128)
	for i := range toks {
		toks[i] = int32(100 + i)
	}
	b.Run("prefill128", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s.Rewind(0)
			if _, err := s.Eval(context.Background(), toks, false); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(128*b.N)/b.Elapsed().Seconds(), "tok/s")
	})
	b.Run("decode", func(b *testing.B) {
		s.Rewind(0)
		for i := 0; i < b.N; i++ {
			if _, err := s.Eval(context.Background(), []int32{int32(100 + i%1000)}, false); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
	})
}

func TestMeanStdDev(t *testing.T) {
	if m, sd := meanStdDev([]float64{2, 4, 4, 4, 5, 5, 7, 9}); m != 5 || sd < 2.138 || sd > 2.139 {
		t.Errorf("mean %g sd %g, want 5 and 2.1381 (sample)", m, sd)
	}
	if m, sd := meanStdDev([]float64{3}); m != 3 || sd != 0 {
		t.Errorf("one value: mean %g sd %g", m, sd)
	}
}
