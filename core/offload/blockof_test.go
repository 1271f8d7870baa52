package offload

import (
	"strconv"
	"strings"
	"testing"
)

func TestBlockOfReadsNamespacedAndFusedBlockNames(t *testing.T) {
	cases := []struct {
		name      string
		wantBlock int
		wantOK    bool
	}{
		{"blk.0.attn_q.weight", 0, true},
		{"blk.21.ffn_down.weight", 21, true},
		{"blk.3.attn_qkv.weight", 3, true}, // fused concat copy
		{"blk.7.ffn_gu.weight", 7, true},   // fused concat copy
		{"model.blk.3.attn_q.weight", 3, true},
		{"enc/blk.12.ffn_up.weight", 12, true},
		{"a.b/c.blk.40.x", 40, true},
		{"blk.5.", 5, true}, // a dot after the number is all the name needs
		{"v.blk.0.attn_k.bias", 0, true},

		{"token_embd.weight", 0, false},
		{"output.weight", 0, false},
		{"output_norm.weight", 0, false},
		{"rope_freqs.weight", 0, false},
		{"blk.x.attn_q.weight", 0, false},
		{"blk.-1.attn_q.weight", 0, false},
		{"blk..attn_q.weight", 0, false},
		{"blk.+3.attn_q.weight", 0, false},
		{"blk.3", 0, false},                      // no dot after the number
		{"blk.3attn_q.weight", 0, false},         // no dot after the number
		{"xblk.3.attn_q.weight", 0, false},       // not at a namespace boundary
		{"model_blk.3.attn_q.weight", 0, false},  // '_' is not a namespace separator
		{"blk.03.attn_q.weight", 0, false},       // not canonical: two names for block 3
		{"blk.99999999999999999999.x", 0, false}, // overflows int
		{"blk.x.blk.3.attn_q.weight", 0, false},  // the first marker decides; no search for a later one
		{"blk.", 0, false},
		{"", 0, false},
		{"blk.３.x", 0, false}, // fullwidth digit is not a decimal digit here
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			block, ok := BlockOf(c.name)
			if ok != c.wantOK || (ok && block != c.wantBlock) {
				t.Fatalf("BlockOf(%q) = (%d, %v), want (%d, %v)", c.name, block, ok, c.wantBlock, c.wantOK)
			}
		})
	}
}

func FuzzBlockOf(f *testing.F) {
	for _, seed := range []string{
		"blk.0.attn_q.weight", "model.blk.3.attn_q.weight", "enc/blk.12.ffn_up.weight",
		"blk.3.attn_qkv.weight", "output.weight", "blk.x.", "blk.-1.", "blk..", "xblk.3.",
		"blk.3", "blk.99999999999999999999.", "blk.0", "/blk.1.", "..blk.2.",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		block, ok := BlockOf(name)
		if !ok {
			return
		}
		if block < 0 {
			t.Fatalf("BlockOf(%q) = %d, a negative block", name, block)
		}
		// The canonical spelling of the block it found is in the name, as a
		// whole dotted segment.
		if !strings.Contains(name, "blk."+strconv.Itoa(block)+".") {
			t.Fatalf("BlockOf(%q) = %d, but %q is not in the name", name, block, "blk."+strconv.Itoa(block)+".")
		}
	})
}
