package cuda

import (
	"slices"
	"testing"
)

// TestParseTwice: MINFER_CUDA_TWICE's list and its prefix match.
func TestParseTwice(t *testing.T) {
	for _, c := range []struct {
		v    string
		want []string
	}{
		{"", nil},
		{" , ", nil},
		{"norm_one", []string{"norm_one"}},
		{"norm_one, attn_x_one_rope ,mvs_q4_0", []string{"norm_one", "attn_x_one_rope", "mvs_q4_0"}},
	} {
		if got := parseTwice(c.v); !slices.Equal(got, c.want) {
			t.Errorf("parseTwice(%q) = %q, want %q", c.v, got, c.want)
		}
	}
	ps := parseTwice("norm_one,mvs_q4_0")
	for fn, want := range map[string]bool{"norm_one": true, "mvs_q4_0_1": true, "mvs_q4_k_1": false, "attn_x_one_rope_64": false} {
		if got := launchTwice(ps, fn); got != want {
			t.Errorf("launchTwice(%q) = %v, want %v", fn, got, want)
		}
	}
	if launchTwice(nil, "norm_one") {
		t.Error("launchTwice with no prefixes matched")
	}
}
