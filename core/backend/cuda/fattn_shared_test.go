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
