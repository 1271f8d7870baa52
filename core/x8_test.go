package core

import (
	"context"
	"math"
	"testing"

	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/ggtest"
)

// TestCopiedX8WeightsSameLogits: a Q4_0 (Q8_0, Q4_K_M) model whose copied
// weights the CPU repacks to x8 or col16 (backend/cpu/x8.go) computes the
// mapped model's logits bit for bit: a prompt step (eight-token tiles, a
// group of four, single tokens) and decode steps, on one thread and two.
// (Q4_K_M: its Q4_K and Q6_K weights take col16 at the AVX512 level.)
func TestCopiedX8WeightsSameLogits(t *testing.T) {
	for _, c := range []struct {
		file string
		wt   gguf.GGMLType
	}{{"Q4_0", gguf.TypeQ4_0}, {"Q8_0", gguf.TypeQ8_0}, {"Q4_K_M", gguf.TypeQ4_K}} {
		t.Run(c.file, func(t *testing.T) { testCopiedX8(t, c.file, c.wt) })
	}
}

func testCopiedX8(t *testing.T, file string, wt gguf.GGMLType) {
	path := ggtest.Path(t, "small", "synth-llama-small-"+file+".gguf")
	k, err := quant.NewKernel(wt, 256)
	if err != nil {
		t.Fatal(err)
	}
	hasX8 := k.HasX8() // else nothing is repacked: the test still runs
	prompt := []int32{1, 15, 27, 3, 99, 42, 7, 8, 100, 5, 61, 2, 33, 4, 9}
	for _, threads := range []int{1, 2} {
		var logits [2][]float32
		for i, mode := range []string{"map", "copy"} {
			o := cpuOnly()
			o.Threads = threads
			o.CPUWeights = mode
			s, err := Load(context.Background(), path, o, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n := s.cpu.X8Weights(); (n > 0) != (mode == "copy" && hasX8) {
				t.Fatalf("%s: %d x8 weights", mode, n)
			}
			// At the AVX512 level Q4_0, Q4_K and Q6_K weights take the col16 layout.
			if n := s.cpu.Col16Weights(); (n > 0) != (mode == "copy" && k.Layout() == quant.LayoutCol16) {
				t.Fatalf("%s: %d col16 weights (kernel layout %s)", mode, n, k.Layout())
			}
			l, err := s.Eval(context.Background(), prompt, true)
			if err != nil {
				t.Fatal(err)
			}
			logits[i] = append(logits[i], l...)
			for _, tok := range []int32{11, 12, 13} {
				l, err := s.Eval(context.Background(), []int32{tok}, true)
				if err != nil {
					t.Fatal(err)
				}
				logits[i] = append(logits[i], l...)
			}
			s.Close()
		}
		if len(logits[0]) != len(logits[1]) {
			t.Fatalf("%d and %d logits", len(logits[0]), len(logits[1]))
		}
		for j := range logits[0] {
			if math.Float32bits(logits[0][j]) != math.Float32bits(logits[1][j]) {
				t.Fatalf("%d threads: logit %d: mapped %g, copied (x8) %g", threads, j, logits[0][j], logits[1][j])
			}
		}
	}
}
