package core

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minfer/minfer/core/backend/cuda"
	"github.com/minfer/minfer/internal/ggtest"
)

// TestGPUPrefillMatchesCPU: a prompt of 44 tokens in one batch with every
// block and the output on the GPU, for each small/ model (every weight
// type; head size 64): the batch takes the tensor-core mat-muls (32 tokens
// or more, quantized weights), which follow the CPU's float order, and
// flash attention (more than one query, F16 cache): by default on the
// tensor cores for the F16 model, on the exact kernels for the quantized
// ones (cuda fattnMMAFor: a short batch). Every position's logits must be
// within gpuVsCPUBound (NMSE) of the CPU backend's for the same batch (the
// logits whose bits differ are counted), and within the model's reference
// bound of llama.cpp's references (token by token; where the CPU's batch
// itself misses that bound, 1.5× the CPU's NMSE), as in
// TestGPULogitsMatchLlamaCpp. Each quantized model runs again with the
// tensor-core attention asked for (MINFER_CUDA_FATTN=mma), held to
// mmaQuantBound of the CPU (its reference NMSE logged), and with a long
// prompt (longPrompt tokens: the reference prompt repeated), which takes
// the tensor cores by default (mmaQuantBound) and the exact kernels with
// MINFER_CUDA_FATTN=exact (gpuVsCPUBound). Each run checks which flash
// kernels its attention took (cuda FlashStats); the CPU's logits are
// computed once a prompt.
func TestGPUPrefillMatchesCPU(t *testing.T) {
	dm := gpuDevice(t)
	for _, refPath := range ggtest.Glob(t, "small", "*.ref.json") {
		ref := loadRef(t, refPath)
		dir := filepath.Dir(refPath)
		path := filepath.Join(dir, ref.Model)
		c := ref.Cases[0]
		for _, cc := range ref.Cases {
			if len(cc.Tokens) > len(c.Tokens) {
				c = cc
			}
		}
		if len(c.Tokens) < 32 {
			t.Fatalf("%s: the longest case has %d tokens, fewer than a tensor-core batch", ref.Model, len(c.Tokens))
		}
		t.Run(ref.Model, func(t *testing.T) {
			info, err := Inspect(path)
			if err != nil {
				t.Fatal(err)
			}
			eval := func(t *testing.T, layers int, tokens []int32) ([]float32, cuda.FlashStats) {
				s, err := Load(context.Background(), path, onGPU(dm, layers, nil), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if rep := s.OffloadReport(); s.Plan().GPULayers != layers || rep.Fallback != "" || (layers > 0 && !strings.HasPrefix(rep.Backend, "CUDA")) {
					t.Fatalf("plan %v, backend %q, fallback %q; want %d GPU layers", s.Plan(), rep.Backend, rep.Fallback, layers)
				}
				l, err := s.Eval(context.Background(), tokens, true)
				if err != nil {
					t.Fatal(err)
				}
				var fs cuda.FlashStats
				if layers > 0 {
					fs = s.bes[1].(*cuda.Backend).FlashStats()
				}
				return l, fs
			}
			worst := func(got, want []float32) float64 {
				w := 0.0
				for row := 0; row+ref.NVocab <= len(want); row += ref.NVocab {
					w = max(w, nmse(got[row:row+ref.NVocab], want[row:row+ref.NVocab]))
				}
				return w
			}
			// The CPU's logits and their distance to the references, once
			// for the model's modes.
			want, _ := eval(t, 0, c.Tokens)
			refs := readLogits(t, filepath.Join(dir, c.LogitsFile))
			refBound := tolerance(ref.Model)
			if strings.Contains(ref.Model, "BF16") {
				refBound = 2e-5
			}
			cpuRef := worst(want, refs)
			if cpuRef > refBound {
				refBound = 1.5 * cpuRef
			}
			quantized := quantizedModel(ref.Model)
			type mode struct {
				name, fattn string
				long        bool
				bound       float64
				tensorCores bool // the attention's flash kernels: tensor-core ones, or exact ones
			}
			modes := []mode{{name: "default", bound: gpuVsCPUBound, tensorCores: !quantized}}
			if quantized {
				modes = append(modes, mode{"mma", "mma", false, mmaQuantBound, true},
					mode{"long", "", true, mmaQuantBound, true}, mode{"long-exact", "exact", true, gpuVsCPUBound, false})
			}
			var wantLong []float32
			var longTokens []int32
			for _, m := range modes {
				t.Run(m.name, func(t *testing.T) {
					tokens, want := c.Tokens, want
					if m.long {
						if longTokens == nil {
							for len(longTokens) < longPrompt {
								longTokens = append(longTokens, c.Tokens...)
							}
							longTokens = longTokens[:longPrompt]
							wantLong, _ = eval(t, 0, longTokens)
						}
						tokens, want = longTokens, wantLong
					}
					t.Setenv("MINFER_CUDA_FATTN", m.fattn)
					got, fs := eval(t, info.HParams.NLayer+1, tokens)
					if len(got) != len(want) || len(want) != len(tokens)*ref.NVocab {
						t.Fatalf("%d logits on the GPU, %d on the CPU, want %d", len(got), len(want), len(tokens)*ref.NVocab)
					}
					if (fs.TensorCore > 0) != m.tensorCores || (fs.Exact > 0) == m.tensorCores {
						t.Errorf("%d tokens: the attention took %d tensor-core and %d exact flash launches; want only %s ones", len(tokens), fs.TensorCore, fs.Exact, map[bool]string{true: "tensor-core", false: "exact"}[m.tensorCores])
					}
					differ, positions, first := 0, 0, -1
					for row := 0; row < len(got); row += ref.NVocab {
						d := 0
						for i := row; i < row+ref.NVocab; i++ {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								d++
							}
						}
						if d > 0 {
							positions++
							if first < 0 {
								first = row / ref.NVocab
							}
						}
						differ += d
					}
					vsCPU := worst(got, want)
					msg := fmt.Sprintf("%d positions, %d of %d logits differ from the CPU's bits (at %d positions, the first %d); worst NMSE: GPU vs CPU %.3g (bound %.0e)",
						len(tokens), differ, len(got), positions, first, vsCPU, m.bound)
					if !m.long { // (the references are of the reference prompt)
						vsRef := worst(got, refs)
						msg += fmt.Sprintf("; vs llama.cpp (token by token): GPU %.3g (bound %.3g), CPU %.3g", vsRef, refBound, cpuRef)
						if m.name == "default" && !(vsRef <= refBound) {
							t.Errorf("worst-position NMSE vs llama.cpp %.3g > %.3g", vsRef, refBound)
						}
					}
					t.Log(msg)
					if !(vsCPU <= m.bound) {
						t.Errorf("worst-position NMSE vs the CPU %.3g > %.0e (%d logits differ)", vsCPU, m.bound, differ)
					}
				})
			}
		})
	}
}

// longPrompt is the prompt length of TestGPUPrefillMatchesCPU's long
// modes: with the session's span class of 256 positions, 160 · 256 query-
// position pairs, past cuda's fattnMMACells (128 · 256).
const longPrompt = 160

// mmaQuantBound is the NMSE a quantized small/ model's GPU logits may have
// against the CPU's with the tensor-core prefill attention asked for: its
// rare last-bit differences flip an int8 of the next activation
// quantization, which moved these models' logits by 9e-5 to 1.6e-4 from
// the flip on (bench/results/2026-12-02-s12-fa-call1); a wrong tile, row
// or element moves them by orders of magnitude more.
const mmaQuantBound = 1e-3
