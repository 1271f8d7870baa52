package core

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/minfer/minfer/internal/ggtest"
)

// TestGPUPrefillMatchesCPU: a prompt of 44 tokens in one batch with every
// block and the output on the GPU, for each small/ model (every weight
// type; head size 64): the batch takes the tensor-core mat-muls (32 tokens
// or more, quantized weights) and flash attention (more than one query,
// F16 cache), which do not follow the CPU's float order. Every position's
// logits must be within the model's reference bound (NMSE) of the CPU
// backend's for the same batch.
func TestGPUPrefillMatchesCPU(t *testing.T) {
	dm := gpuDevice(t)
	for _, refPath := range ggtest.Glob(t, "small", "*.ref.json") {
		ref := loadRef(t, refPath)
		path := filepath.Join(filepath.Dir(refPath), ref.Model)
		var tokens []int32
		for _, c := range ref.Cases {
			if len(c.Tokens) > len(tokens) {
				tokens = c.Tokens
			}
		}
		if len(tokens) < 32 {
			t.Fatalf("%s: the longest case has %d tokens, fewer than a tensor-core batch", ref.Model, len(tokens))
		}
		t.Run(ref.Model, func(t *testing.T) {
			info, err := Inspect(path)
			if err != nil {
				t.Fatal(err)
			}
			eval := func(layers int) []float32 {
				s, err := Load(context.Background(), path, onGPU(dm, layers, nil), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				l, err := s.Eval(context.Background(), tokens, true)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			want := eval(0)
			got := eval(info.HParams.NLayer + 1)
			if len(got) != len(want) || len(want) != len(tokens)*ref.NVocab {
				t.Fatalf("%d logits on the GPU, %d on the CPU, want %d", len(got), len(want), len(tokens)*ref.NVocab)
			}
			bound, worst := tolerance(ref.Model), 0.0
			for row := 0; row < len(want); row += ref.NVocab {
				worst = max(worst, nmse(got[row:row+ref.NVocab], want[row:row+ref.NVocab]))
			}
			t.Logf("%d positions, worst NMSE vs the CPU %.3g (bound %.0e)", len(tokens), worst, bound)
			if !(worst <= bound) {
				t.Errorf("worst-position NMSE vs the CPU %.3g > %.0e", worst, bound)
			}
		})
	}
}
