package cuda

import "testing"

// TestParseL2Prefetch: MINFER_CUDA_L2PF's values (no GPU needed).
func TestParseL2Prefetch(t *testing.T) {
	for v, want := range map[string]l2Prefetch{
		"":        {},
		"0":       {},
		"-3":      {},
		"x":       {},
		"2000":    {},
		"32":      {blocks: 32, max: 16 << 20},
		" 64 ":    {blocks: 64, max: 16 << 20},
		"32,4":    {blocks: 32, max: 4 << 20},
		"32,0":    {},
		"32,abc":  {},
		"128, 24": {blocks: 128, max: 24 << 20},
	} {
		if got := parseL2Prefetch(v); got != want {
			t.Errorf("MINFER_CUDA_L2PF=%q: %+v, want %+v", v, got, want)
		}
	}
}
