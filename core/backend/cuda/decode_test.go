package cuda

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestParseDecodeOff: the MINFER_CUDA_DECODE list switches off exactly the
// paths it names ("all" every one; unknown names nothing).
func TestParseDecodeOff(t *testing.T) {
	for _, c := range []struct {
		in   string
		want decodeOff
	}{
		{"", decodeOff{}},
		{"all", decodeOff{mv: true, multi: true, attn: true, attnOne: true, quant: true, addNorm: true, rope: true, store: true, mvNorm: true, mvRope: true, normOne: true, ropeOne: true, mvPipe: true, mvSplit: true, vals: true, attnQ8K: true, ropeAttn: true, swMV: true}},
		{"ropeattn", decodeOff{ropeAttn: true}},
		{"swmv", decodeOff{swMV: true}},
		{"swmv,multi", decodeOff{swMV: true, multi: true}},
		{"vals", decodeOff{vals: true}},
		{"attnq8k", decodeOff{attnQ8K: true}},
		{"mvnorm,mvrope", decodeOff{mvNorm: true, mvRope: true}},
		{"normone,ropeone", decodeOff{normOne: true, ropeOne: true}},
		{"mvpipe", decodeOff{mvPipe: true}},
		{"mvsplit", decodeOff{mvSplit: true}},
		{"mvpipe,mvsplit", decodeOff{mvPipe: true, mvSplit: true}},
		{"normmv,one", decodeOff{attnOne: true}}, // normmv: a retired path, nothing
		{"mv,attn", decodeOff{mv: true, attn: true}},
		{"one", decodeOff{attnOne: true}},
		{"quant,addnorm,rope,store,multi", decodeOff{multi: true, quant: true, addNorm: true, rope: true, store: true}},
		{"bogus", decodeOff{}},
		{"none", decodeOff{}},
		{defaultDecodeOff, decodeOff{mvNorm: true, mvRope: true, swMV: true}}, // the tails: norm_one and rope_store_one instead; swmv: the gate|up mat-vec and swiglu_quant
	} {
		if got := parseDecodeOff(c.in); got != c.want {
			t.Errorf("parseDecodeOff(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// TestOverlaps: the byte-range test that keeps the rope pair from running
// q and k at once when one's output lies on the other's input.
func TestOverlaps(t *testing.T) {
	for _, c := range []struct {
		a      uintptr
		na     int64
		b      uintptr
		nb     int64
		expect bool
	}{
		{0, 16, 16, 16, false}, {0, 17, 16, 16, true}, {16, 16, 0, 16, false}, {16, 16, 0, 17, true},
		{100, 10, 104, 2, true}, {104, 2, 100, 10, true}, {0, 0, 0, 8, false},
	} {
		if got := overlaps(c.a, c.na, c.b, c.nb); got != c.expect {
			t.Errorf("overlaps(%d,%d, %d,%d) = %v", c.a, c.na, c.b, c.nb, got)
		}
	}
}

// TestWarpsFor: the one-token mat-vecs take blocks of four warps, and a
// MINFER_CUDA_MVS_WARPS value overrides that.
func TestWarpsFor(t *testing.T) {
	b := &Backend{dv: &device{sms: 132}}
	if got := b.warpsFor(); got != 4 {
		t.Errorf("warpsFor() = %d, want 4", got)
	}
	b.mvsWarps = 2
	if got := b.warpsFor(); got != 2 {
		t.Errorf("with MINFER_CUDA_MVS_WARPS=2: %d", got)
	}
	for v, want := range map[string]int64{"": 0, "1": 1, "2": 2, "4": 4, "8": 8, "3": 0, "auto": 0} {
		t.Setenv("MINFER_CUDA_MVS_WARPS", v)
		if got := mvsWarpsFromEnv(); got != want {
			t.Errorf("MINFER_CUDA_MVS_WARPS=%q: %d, want %d", v, got, want)
		}
	}
}

// TestNorm1Block: norm_one's block holds a row's values NORM1_K a thread at
// most, in whole warps, never more than 1024 threads, and a limit only
// lowers it where the row allows.
func TestNorm1Block(t *testing.T) {
	for _, limit := range []int64{0, 256, 512, 1024} {
		for n := 1; n <= normOneMax; n += 37 {
			got := norm1Block(n, limit)
			if got%32 != 0 || got > 1024 || got*norm1K < n {
				t.Fatalf("norm1Block(%d, %d) = %d", n, limit, got)
			}
			want := min(1024, (n+31)/32*32)
			if limit != 0 && limit < 1024 {
				want = max(min(want, int(limit)), (n+norm1K*32-1)/(norm1K*32)*32)
			}
			if got != want {
				t.Fatalf("norm1Block(%d, %d) = %d, want %d", n, limit, got, want)
			}
		}
	}
	if got := norm1Block(4096, 256); got != 512 {
		t.Fatalf("norm1Block(4096, 256) = %d, want 512 (8 values a thread)", got)
	}
	if got := norm1Block(2048, 256); got != 256 {
		t.Fatalf("norm1Block(2048, 256) = %d, want 256", got)
	}
	src, err := os.ReadFile("kernels/decode.cu")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), fmt.Sprintf("#define NORM1_K %d\n", norm1K)) {
		t.Fatalf("decode.cu does not define NORM1_K as norm1K (%d)", norm1K)
	}
}
