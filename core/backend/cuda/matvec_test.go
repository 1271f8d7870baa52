package cuda

import "testing"

// TestStagedFits: the staged mat-vecs take 16-byte aligned weights and
// rows (and, for a batch, 16-byte activation rows) whose staging fits half
// the shared-memory limit; one token's activations are rounded up to 16
// bytes; a block holds 8 warps of rpw rows (one token) or of one row (a
// batch). The shapes are the 1.1B and 8B models' (Q4_0 over 2048 and
// 5632, two rows a warp; Q4_K over 4096 and 14336, Q6_K output over 2048).
func TestStagedFits(t *testing.T) {
	const limit = 232448 - attentionStaticShared // an H200's opt-in shared memory
	for _, c := range []struct {
		name              string
		wrb, xrb, nt, rpw int64
		w                 uintptr
		smem              int64
		ok                bool
	}{
		{"q4_0 2048", 1152, 2176, 1, 2, 256, 16*1152 + 2176, true},
		{"q4_0 5632", 3168, 5984, 1, 2, 512, 16*3168 + 5984, true},
		{"q4_0 5632 batch of 3", 3168, 5984, 3, 2, 512, 8*3168 + 3*5984, true},
		{"q4_k 4096", 2304, 4672, 1, 1, 0, 8*2304 + 4672, true},
		{"q4_k 14336", 8064, 16352, 1, 1, 0, 8*8064 + 16352, true},
		{"q6_k 2048", 1680, 2336, 1, 1, 0, 8*1680 + 2336, true},
		{"q8_k row rounded up", 288, 584, 1, 1, 0, 8*288 + 592, true},
		{"batch of 5", 2304, 4672, 5, 1, 0, 8*2304 + 5*4672, true},
		{"batch of 20: 8 a grid row", 2304, 4672, 20, 1, 0, 8*2304 + 8*4672, true},
		{"batch, two-row warps: one row a warp", 1152, 2176, 4, 2, 0, 8*1152 + 4*2176, true},
		{"batch, odd activation row", 288, 584, 3, 1, 0, 0, false},
		{"odd weight row", 420, 584, 1, 1, 0, 0, false},
		{"misaligned weights", 1152, 2176, 1, 2, 8, 0, false},
		{"over half the limit", 11968, 11968, 3, 1, 0, 11 * 11968, false},
	} {
		smem, ok := stagedFits(c.wrb, c.xrb, c.nt, c.rpw, limit, c.w)
		if ok != c.ok || (ok && smem != c.smem) {
			t.Errorf("%s: stagedFits = %d, %v; want %d, %v", c.name, smem, ok, c.smem, c.ok)
		}
	}
	if _, ok := stagedFits(1152, 2176, 1, 2, limit, 0, 256, 1024+8); ok {
		t.Error("a multi launch with one misaligned weight was taken")
	}
	if stagedRows(1, 2) != 16 || stagedRows(5, 2) != 8 || stagedRows(1, 1) != 8 {
		t.Errorf("stagedRows: %d %d %d", stagedRows(1, 2), stagedRows(5, 2), stagedRows(1, 1))
	}
}

// TestMVV1FromEnv: MINFER_CUDA_MV=v1 selects the unstaged kernels; any
// other value (or none) the staged ones.
func TestMVV1FromEnv(t *testing.T) {
	for v, want := range map[string]bool{"v1": true, "": false, "v2": false, "V1": false} {
		t.Setenv("MINFER_CUDA_MV", v)
		if got := mvV1FromEnv(); got != want {
			t.Errorf("MINFER_CUDA_MV=%q: v1 %v, want %v", v, got, want)
		}
	}
}
