package model

import (
	"reflect"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TestFusions: a block gets a fused device form only where every part
// exists with one type and one row length of whole blocks, and the file
// has no tensor of that name; Phi-3 (already fused) and expert FFNs get
// none for the parts they do not have.
func TestFusions(t *testing.T) {
	llama, err := Lookup("llama")
	if err != nil {
		t.Fatal(err)
	}
	phi3, err := Lookup("phi3")
	if err != nil {
		t.Fatal(err)
	}
	type tensor struct {
		name string
		t    gguf.GGMLType
		dims []int64
	}
	dense := []tensor{
		{"blk.0.attn_q.weight", gguf.TypeQ4_0, []int64{256, 256}},
		{"blk.0.attn_k.weight", gguf.TypeQ4_0, []int64{256, 64}},
		{"blk.0.attn_v.weight", gguf.TypeQ4_0, []int64{256, 64}},
		{"blk.0.ffn_gate.weight", gguf.TypeQ4_0, []int64{256, 512}},
		{"blk.0.ffn_up.weight", gguf.TypeQ4_0, []int64{256, 512}},
	}
	with := func(base []tensor, edit func([]tensor) []tensor) []tensor {
		return edit(append([]tensor(nil), base...))
	}
	for _, c := range []struct {
		name    string
		arch    Arch
		h       HParams
		tensors []tensor
		want    []Fusion
	}{
		{"dense llama", llama, HParams{}, dense, []Fusion{
			{Name: "blk.0.attn_qkv.weight", Parts: []string{"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight"}, Type: gguf.TypeQ4_0, Dims: []int64{256, 384}},
			{Name: "blk.0.ffn_gu.weight", Parts: []string{"blk.0.ffn_gate.weight", "blk.0.ffn_up.weight"}, Type: gguf.TypeQ4_0, Dims: []int64{256, 1024}},
		}},
		{"V of another type", llama, HParams{}, with(dense, func(ts []tensor) []tensor { ts[2].t = gguf.TypeQ8_0; return ts }), []Fusion{
			{Name: "blk.0.ffn_gu.weight", Parts: []string{"blk.0.ffn_gate.weight", "blk.0.ffn_up.weight"}, Type: gguf.TypeQ4_0, Dims: []int64{256, 1024}},
		}},
		{"up of another row length", llama, HParams{}, with(dense, func(ts []tensor) []tensor { ts[4].dims = []int64{512, 512}; return ts }), []Fusion{
			{Name: "blk.0.attn_qkv.weight", Parts: []string{"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight"}, Type: gguf.TypeQ4_0, Dims: []int64{256, 384}},
		}},
		{"no K", llama, HParams{}, with(dense, func(ts []tensor) []tensor { return append(ts[:1], ts[2:]...) }), []Fusion{
			{Name: "blk.0.ffn_gu.weight", Parts: []string{"blk.0.ffn_gate.weight", "blk.0.ffn_up.weight"}, Type: gguf.TypeQ4_0, Dims: []int64{256, 1024}},
		}},
		{"experts: no dense gate/up", llama, HParams{NExpert: 4, NExpertUsed: 2}, dense[:3], []Fusion{
			{Name: "blk.0.attn_qkv.weight", Parts: []string{"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight"}, Type: gguf.TypeQ4_0, Dims: []int64{256, 384}},
		}},
		{"phi3 is fused already", phi3, HParams{}, dense, nil},
		{"the file has the fused name", llama, HParams{}, with(dense, func(ts []tensor) []tensor {
			return append(ts, tensor{"blk.0.attn_qkv.weight", gguf.TypeQ4_0, []int64{256, 384}})
		}), []Fusion{
			{Name: "blk.0.ffn_gu.weight", Parts: []string{"blk.0.ffn_gate.weight", "blk.0.ffn_up.weight"}, Type: gguf.TypeQ4_0, Dims: []int64{256, 1024}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			byName := map[string]*gguf.TensorInfo{}
			for _, ts := range c.tensors {
				byName[ts.name] = &gguf.TensorInfo{Name: ts.name, Type: ts.t, Dims: ts.dims}
			}
			lookup := func(n string) (*gguf.TensorInfo, bool) { ti, ok := byName[n]; return ti, ok }
			got := FusionsOf(c.arch, c.h, lookup, 0)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
			for _, f := range got {
				n, err := f.Bytes()
				var sum int64
				for _, p := range f.Parts {
					b, err := byName[p].Type.RowBytes(byName[p].NElements())
					if err != nil {
						t.Fatal(err)
					}
					sum += b
				}
				if err != nil || n != sum {
					t.Errorf("%s: %d bytes (%v), parts hold %d", f.Name, n, err, sum)
				}
			}
		})
	}
}
