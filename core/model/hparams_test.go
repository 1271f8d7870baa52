package model

import (
	"errors"
	"testing"

	"github.com/minfer/minfer/gguf"
)

func TestKVRowBytes(t *testing.T) {
	h := HParams{HeadDim: 48, NHeadKV: 2} // 96 elements a row
	for _, c := range []struct {
		t    gguf.GGMLType
		want int64
	}{{gguf.TypeF32, 384}, {gguf.TypeF16, 192}, {gguf.TypeQ8_0, 3 * 34}} {
		got, err := h.KVRowBytes(c.t)
		if err != nil || got != c.want {
			t.Errorf("KVRowBytes(%s) = %d, %v; want %d", c.t, got, err, c.want)
		}
	}
	full := HParams{HeadDim: 48, NHeadKV: 2, NLayer: 4}
	if got := full.KVBytes(512, gguf.TypeF16, nil); got != 2*192*512*4 {
		t.Errorf("KVBytes = %d, want K and V of 4 layers × 512 rows × 192 bytes", got)
	}
	// A block type whose block does not divide the row is an error, not a
	// zero-byte cache.
	if _, err := h.KVRowBytes(gguf.TypeQ4_K); err == nil {
		t.Error("a 96-element row of Q4_K (256-element blocks) was accepted")
	}
	if got := full.KVLayerBytes(0, 512, gguf.TypeQ4_K); got != 0 {
		t.Errorf("KVLayerBytes of a rejected type = %d, want 0 (Plan refuses the type first)", got)
	}
	if _, err := h.KVRowBytes(gguf.GGMLType(999)); !errors.Is(err, gguf.ErrUnknownType) {
		t.Errorf("unknown type: %v, want gguf.ErrUnknownType", err)
	}
}
