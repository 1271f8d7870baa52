package synth

import (
	"bytes"
	"testing"

	"github.com/minfer/minfer/gguf"
)

func TestWriteMakesAValidModelAndRefusesBadShapes(t *testing.T) {
	cfg := Presets["tiny"]
	cfg.NVocab, cfg.Type = 300, gguf.TypeQ4_K
	var buf bytes.Buffer
	if err := Write(&buf, cfg); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != 3+9*cfg.NLayer {
		t.Errorf("%d tensors", len(f.Tensors))
	}
	if ti, _ := f.Tensor("blk.1.ffn_down.weight"); ti.Type != gguf.TypeQ4_K || ti.Dims[0] != int64(cfg.NFF) {
		t.Errorf("ffn_down %+v", ti)
	}
	if ti, _ := f.Tensor("output.weight"); ti.Type != gguf.TypeQ6_K {
		t.Errorf("output head %s, want Q6_K for a 4-bit model", ti.Type)
	}
	for name, bad := range map[string]Config{
		"heads":      {NEmbd: 256, NLayer: 1, NHead: 3, NHeadKV: 1, NFF: 512, NVocab: 300, Ctx: 8, Type: gguf.TypeQ8_0},
		"block size": {NEmbd: 128, NLayer: 1, NHead: 2, NHeadKV: 1, NFF: 512, NVocab: 300, Ctx: 8, Type: gguf.TypeQ4_K},
		"type":       {NEmbd: 256, NLayer: 1, NHead: 2, NHeadKV: 1, NFF: 512, NVocab: 300, Ctx: 8, Type: gguf.TypeIQ2_XS},
		"vocab":      {NEmbd: 256, NLayer: 1, NHead: 2, NHeadKV: 1, NFF: 512, NVocab: 10, Ctx: 8, Type: gguf.TypeQ8_0},
	} {
		if err := Write(&bytes.Buffer{}, bad); err == nil {
			t.Errorf("%s: bad config accepted", name)
		}
	}
}
