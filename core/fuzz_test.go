package core

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/synth"
)

// FuzzInspect: whatever a file's bytes say, inspecting it (index, metadata,
// hyper-parameters, per-block bytes, tensor checks) and planning it either
// works or errors; when it works and the model is loadable, one token runs.
func FuzzInspect(f *testing.F) {
	// Small seeds keep the fuzzer fast: a whole model in a few KiB (the
	// real files are covered by gguf's FuzzOpen and the reference tests).
	for _, typ := range []gguf.GGMLType{gguf.TypeF32, gguf.TypeQ8_0} {
		var buf bytes.Buffer
		cfg := synth.Config{NEmbd: 32, NLayer: 2, NHead: 2, NHeadKV: 1, NFF: 64, NVocab: 260, Ctx: 16, Type: typ, OutputType: typ}
		if err := synth.Write(&buf, cfg); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		gf, err := gguf.Parse(data)
		if err != nil {
			return
		}
		gf.Path = "fuzz.gguf"
		info, err := inspectFile(gf)
		if err != nil || info.Problem != "" || info.HParams == nil {
			return
		}
		if info.HParams.NVocab*info.HParams.NEmbd > 1<<24 || info.HParams.NLayer > 8 {
			return // loadable, but too big to run inside a fuzz iteration
		}
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		o := cpuOnly()
		o.Ctx = 16
		s, err := Load(context.Background(), path, o, nil)
		if err != nil {
			return
		}
		defer s.Close()
		if _, err := s.Eval(context.Background(), []int32{1}, false); err != nil {
			t.Logf("eval: %v", err)
		}
	})
}
