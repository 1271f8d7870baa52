package cuda

import "testing"

// TestFattnSharedFollowsTheKernel: what a flash launch asks for follows
// the kernel it launches (fattnFor): its rows, threads and blocks an SM,
// and the scores it keeps, rows × kvLen (64-rounded) floats. Runs without
// a GPU.
func TestFattnSharedFollowsTheKernel(t *testing.T) {
	for _, wide := range []bool{false, true} {
		b := &Backend{fattnWide: wide}
		for hd, want := range map[int]fattnKernel{
			64: {"fattn_f16_64", 4, 256, 2}, 96: {"fattn_f16_96", 2, 256, 2},
			128: {"fattn_f16_128", 2, 256, 2}, 256: {"fattn_f16_256", 1, 256, 1},
		} {
			if wide && hd == 128 {
				want = fattnKernel{"fattn_f16_128w", 4, 512, 1}
			}
			fk := b.fattnFor(hd)
			if fk != want {
				t.Errorf("wide %v hd %d: %+v, want %+v", wide, hd, fk, want)
			}
			if got := fattnKeepShared(fk.rows, 300); got != want.rows*320*4 {
				t.Errorf("wide %v hd %d: keeps %d bytes of scores, want %d", wide, hd, got, want.rows*320*4)
			}
		}
	}
}

// TestFattnSeenShared: a bit a 64-position tile, whole 32-bit words — one
// word up to 32 tiles, the 33rd tile a second — and what the exact kernels
// ask for at the 8B shape (head size 128, four rows, 512 positions) fits
// beside the scores they keep on a 227 KiB device. Runs without a GPU.
func TestFattnSeenShared(t *testing.T) {
	for kvLen, want := range map[int]int{1: 4, 64: 4, 300: 4, 2048: 4, 2049: 8, 4096: 8, 131072: 256} {
		if got := fattnSeenShared(kvLen); got != want {
			t.Errorf("fattnSeenShared(%d) = %d, want %d", kvLen, got, want)
		}
	}
	if sm := fattnShared(128, fattnKernel{"fattn_f16_128w", 4, 512, 1}) + fattnSeenShared(512) + fattnKeepShared(4, 512); sm > 232448-1024 {
		t.Errorf("the 8B shape's flash launch asks for %d bytes of shared memory with its scores kept", sm)
	}
}

// TestFattnSplit: which exact kernels compute a score by two threads (a
// thread pair for each of a tile's rows × 64 scores) and which by eight
// threads a position for all its rows (their K tile rows are padded by
// eight floats), as fattn.cu's SPLIT and OCT have it, and the shared
// memory that follows. Runs without a GPU.
func TestFattnSplit(t *testing.T) {
	for _, c := range []struct {
		hd         int
		wide       bool
		split, oct bool
		smem       int
	}{
		// max(K tile + two V tiles + K halves, the chains), then q, scores, maxima, 1/sums, float64 sums.
		{64, false, false, true, max(64*72*4+2*64*72*2+64*64*2, 4*64*65*4) + (4*64+4*64+8)*4 + 4*8},
		{96, false, true, false, max(64*104*4+2*64*104*2+64*96*2, 2*96*65*4) + (2*96+2*64+4)*4 + 2*8},
		{128, false, false, true, max(64*136*4+2*64*136*2+64*128*2, 2*128*65*4) + (2*128+2*64+4)*4 + 2*8},
		{256, false, true, false, max(64*264*4+2*64*264*2+64*256*2, 256*65*4) + (256+64+2)*4 + 8},
		{128, true, false, true, max(64*136*4+2*64*136*2+64*128*2, 4*128*65*4) + (4*128+4*64+8)*4 + 4*8},
	} {
		b := &Backend{fattnWide: c.wide}
		k := b.fattnFor(c.hd)
		if got := fattnSplit(c.hd, k); got != c.split {
			t.Errorf("%s: split %v, want %v", k.name, got, c.split)
		}
		if got := fattnOct(c.hd, k); got != c.oct {
			t.Errorf("%s: oct %v, want %v", k.name, got, c.oct)
		}
		if got := fattnShared(c.hd, k); got != c.smem {
			t.Errorf("%s: %d bytes of shared memory, want %d", k.name, got, c.smem)
		}
	}
}

// TestFattnMMASharedFollowsTheKernel: the tensor-core kernels take head
// sizes 64 and 128 unless the exact kernels are asked for or a quantized
// weight is on the backend and the batch is short (then only with
// MINFER_CUDA_FATTN=mma), with the
// shared memory of fattn_mma.cu (five tiles of 64 rows of hd+8 halves, 8
// bytes a 64-position tile of the cache), and leave caches whose seen
// masks do not fit to the exact kernels. Runs without a GPU (an H200's
// opt-in shared memory).
func TestFattnMMASharedFollowsTheKernel(t *testing.T) {
	for _, exact := range []bool{false, true} {
		b := &Backend{fattnExact: exact, dv: &device{smemOptin: 232448}}
		for hd, want := range map[int]string{64: "fattn_mma_64", 96: "", 128: "fattn_mma_128", 256: ""} {
			if exact {
				want = ""
			}
			if name, ok := b.fattnMMAFor(hd, 512, 300); ok != (want != "") || ok && name != want {
				t.Errorf("exact %v hd %d: %q %v, want %q", exact, hd, name, ok, want)
			}
		}
	}
	// Quantized weights: the tensor cores from fattnMMACells query-position
	// pairs on (every batch with MINFER_CUDA_FATTN=mma), an F16 model's
	// every batch.
	for _, all := range []bool{false, true} {
		for _, quant := range []bool{false, true} {
			b := &Backend{quantWeights: quant, fattnMMAAll: all, dv: &device{smemOptin: 232448}}
			for _, tc := range []struct{ T, kvLen int }{{44, 256}, {127, 256}, {128, 256}, {512, 512}, {31, 1024}, {32, 1024}, {2, 512}} {
				want := all || !quant || tc.T*tc.kvLen >= 128*256
				if _, ok := b.fattnMMAFor(128, tc.T, tc.kvLen); ok != want {
					t.Errorf("quantized %v, mma for all %v, %d tokens over %d: tensor cores %v, want %v", quant, all, tc.T, tc.kvLen, ok, want)
				}
			}
		}
	}
	if got, want := fattnMMAShared(128, 300), 5*64*136*2+5*8; got != want {
		t.Errorf("head size 128 over 300 positions: %d bytes, want %d", got, want)
	}
	if got, want := fattnMMAShared(64, 64), 5*64*72*2+8; got != want {
		t.Errorf("head size 64 over 64 positions: %d bytes, want %d", got, want)
	}
	b := &Backend{dv: &device{smemOptin: 232448}}
	fits := (232448 - attentionStaticShared - 5*64*136*2) / 8 * 64
	if _, ok := b.fattnMMAFor(128, 512, fits); !ok {
		t.Errorf("a cache of %d positions does not fit", fits)
	}
	if _, ok := b.fattnMMAFor(128, 512, fits+1); ok {
		t.Errorf("a cache of %d positions fits", fits+1)
	}
}

// TestParseFattnMode: MINFER_CUDA_FATTN's values and what each switches
// (no GPU needed).
func TestParseFattnMode(t *testing.T) {
	for v, want := range map[string]fattnMode{
		"":       {},
		"mma":    {mmaAll: true},
		"exact":  {exact: true},
		"nokeep": {exact: true, noKeep: true},
		"narrow": {exact: true, narrow: true},
		"0":      {off: true},
		"other":  {},
	} {
		if got := parseFattnMode(v); got != want {
			t.Errorf("MINFER_CUDA_FATTN=%q: %+v, want %+v", v, got, want)
		}
	}
}
