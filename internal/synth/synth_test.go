package synth

import (
	"bytes"
	"fmt"
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

// TestMixQ4_K_M: the Q4_K_M mix on 8 blocks puts attn_v and ffn_down of
// blocks 0, 3, 6 and 7 (llama.cpp's use_more_bits) and the output head in
// Q6_K, every other mat-mul and the embedding in Q4_K, and says file type 15; a mix on the
// wrong base type or an unknown mix is refused.
func TestMixQ4_K_M(t *testing.T) {
	cfg := Presets["tiny"]
	cfg.NVocab, cfg.NLayer, cfg.Type, cfg.Mix = 300, 8, gguf.TypeQ4_K, "Q4_K_M"
	var buf bytes.Buffer
	if err := Write(&buf, cfg); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if ft, err := f.Meta.Uint32("general.file_type"); err != nil || ft != 15 {
		t.Errorf("file_type %d (%v), want 15", ft, err)
	}
	more := map[int]bool{0: true, 3: true, 6: true, 7: true}
	for il := 0; il < 8; il++ {
		for _, role := range []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"} {
			want := gguf.TypeQ4_K
			if more[il] && (role == "attn_v" || role == "ffn_down") {
				want = gguf.TypeQ6_K
			}
			ti, ok := f.Tensor(fmt.Sprintf("blk.%d.%s.weight", il, role))
			if !ok || ti.Type != want {
				t.Errorf("blk.%d.%s: %v, want %s", il, role, ti, want)
			}
		}
	}
	for name, want := range map[string]gguf.GGMLType{"output.weight": gguf.TypeQ6_K, "token_embd.weight": gguf.TypeQ4_K} {
		if ti, _ := f.Tensor(name); ti.Type != want {
			t.Errorf("%s: %s, want %s", name, ti.Type, want)
		}
	}
	bad := cfg
	bad.Type = gguf.TypeQ4_0
	if err := Write(&bytes.Buffer{}, bad); err == nil {
		t.Error("Q4_K_M on a Q4_0 base accepted")
	}
	bad = cfg
	bad.Mix = "Q3_K_L"
	if err := Write(&bytes.Buffer{}, bad); err == nil {
		t.Error("unknown mix accepted")
	}
}
