package core

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/coretest"
	"github.com/minfer/minfer/internal/synth"
)

// TestEveryWeightTypeRunsThroughTheRuntime: a model in each supported
// weight type gives the same logits as the same weights dequantized to F32,
// up to the activation quantization of the type's vec-dot partner.
func TestEveryWeightTypeRunsThroughTheRuntime(t *testing.T) {
	types := []gguf.GGMLType{gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1,
		gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K}
	dir := t.TempDir()
	toks := []int32{1, 300, 301, 302, 400, 401, 402, 500}
	for _, typ := range types {
		t.Run(typ.String(), func(t *testing.T) {
			cfg := synth.Config{NEmbd: 256, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 512, NVocab: 512, Ctx: 64, Type: typ, OutputType: typ, Seed: 7}
			qpath := filepath.Join(dir, typ.String()+".gguf")
			w, err := os.Create(qpath)
			if err != nil {
				t.Fatal(err)
			}
			if err := synth.Write(w, cfg); err != nil {
				t.Fatal(err)
			}
			w.Close()
			fpath := dequantizedCopy(t, qpath)
			got := evalAll(t, qpath, toks)
			want := evalAll(t, fpath, toks)
			e := nmse(got, want)
			t.Logf("%s vs its F32 dequantization: NMSE %.3g", typ, e)
			bound := 1e-3
			if typ == gguf.TypeF16 || typ == gguf.TypeBF16 {
				bound = 1e-4
			}
			if e > bound || e == 0 && typ != gguf.TypeF16 && typ != gguf.TypeBF16 {
				t.Errorf("NMSE %.3g (bound %.0g)", e, bound)
			}
		})
	}
}

func evalAll(t *testing.T, path string, toks []int32) []float32 {
	s, err := Load(context.Background(), path, cpuOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := s.Eval(context.Background(), toks, true)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// dequantizedCopy rewrites every tensor as F32.
func dequantizedCopy(t *testing.T, src string) string {
	return coretest.Rewrite(t, src, func(f *gguf.File, b *gguf.Builder) error {
		for i := range f.Tensors {
			ti := &f.Tensors[i]
			data, _ := f.TensorData(ti)
			vals := make([]float32, ti.NElements())
			if err := quant.Dequantize(ti.Type, data, vals); err != nil {
				return err
			}
			raw := make([]byte, 4*len(vals))
			if err := quant.QuantizeRow(gguf.TypeF32, vals, raw); err != nil {
				return err
			}
			if err := b.ReplaceTensor(ti.Name, gguf.TypeF32, ti.Dims, raw); err != nil {
				return err
			}
		}
		return nil
	})
}
